#include "ringside/gui/sort_values.h"

#include <QString>

namespace ringside::gui {

int compareSortValues(const QVariant& a, const QVariant& b) {
  if (!a.isValid() || !b.isValid()) return static_cast<int>(a.isValid()) - b.isValid();
  if (a.typeId() == QMetaType::QString || b.typeId() == QMetaType::QString) {
    return QString::localeAwareCompare(a.toString().toCaseFolded(), b.toString().toCaseFolded());
  }
  const double x = a.toDouble();
  const double y = b.toDouble();
  return x < y ? -1 : (y < x ? 1 : 0);
}

}  // namespace ringside::gui
