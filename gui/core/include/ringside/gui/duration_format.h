// The GUI's one way of writing a duration (elapsed time, ETA, a run's length). Thread-safe (uses
// the default QLocale and the installed translators, which the GUI sets before any window).
#pragma once

#include <QString>

namespace ringside::gui {

// `seconds` rounded to whole seconds, in the default locale: "42 s", "3 min 05 s",
// "1 h 02 min" (hours without an upper bound: "1.234 h 05 min" in German). Negative -> "0 s".
QString formatDuration(double seconds);

}  // namespace ringside::gui
