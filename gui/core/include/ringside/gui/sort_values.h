// How the GUI's sorted tables order two cells: the one comparison behind RunFilterProxy (History)
// and RankTableProxy (the per-rank table), over the values of their models' sort roles.
#pragma once

#include <QVariant>

namespace ringside::gui {

// Orders two sort-role values: negative when `a` goes before `b` ascending, positive after, 0
// when equal. N/A (an invalid QVariant) comes before every value (first ascending, last
// descending); two numbers compare by value (toDouble); when either is a QString, the texts
// compare case-insensitively in the user's locale (QString::localeAwareCompare of the
// case-folded texts). Thread-safety: a pure function.
int compareSortValues(const QVariant& a, const QVariant& b);

}  // namespace ringside::gui
