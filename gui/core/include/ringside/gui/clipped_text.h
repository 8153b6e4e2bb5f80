// Text from an agent as the GUI's widgets show it (docs/security.md, "What a node can do to the
// GUI"). A label lays out and paints its whole text on the GUI thread, and Qt's layout of a very
// long line is slow and, past some size, crashes (a 4 MiB run reason in the dashboard's message
// label blocked the GUI for 22 s; a 512 KiB one crashed it). The protocol bounds such text
// (agent_bounds.h: a reason is at most 4 KiB); on top of that a label shows one line of at most a
// few dozen characters, ending in "…" when there is more, and the whole text goes to the label's
// tooltip, broken into lines.
//
// Thread-safety: pure functions.
#pragma once

#include <QString>

namespace ringside::gui {

// Characters a one-line label shows of an agent's text (a run's reason, an error message).
inline constexpr int kLabelChars = 120;
// Characters of one line of the run log view (the whole line, up to 64 KiB, is in the run's log
// file on its node and in the GUI's database).
inline constexpr int kLogViewLineChars = 4096;
// Characters of one tooltip line (tooltipText).
inline constexpr int kToolTipLineChars = 100;

// The first line of `text`, cut to at most `maxChars` characters (UTF-16 code units, never
// splitting a surrogate pair); it ends in "…" when anything was left out (more characters or more
// lines). Trailing white space of the line is dropped.
QString elidedLine(const QString& text, int maxChars = kLabelChars);

// `text` for a tooltip: broken into lines of at most kToolTipLineChars characters, at a space
// where there is one, so that a long text shows as a readable block instead of one line wider
// than the screen. Plain text (no HTML is interpreted). "" for "".
QString tooltipText(const QString& text);

}  // namespace ringside::gui
