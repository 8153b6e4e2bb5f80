#include "ringside/gui/clipped_text.h"

#include <QStringList>

namespace ringside::gui {

namespace {

constexpr QChar kEllipsis(0x2026);

// The length of `text`'s prefix of at most `length` code units that does not end between the two
// halves of a surrogate pair.
qsizetype safePrefix(const QString& text, qsizetype length) {
  if (length <= 0 || length >= text.size()) return qMax<qsizetype>(0, qMin(length, text.size()));
  return text.at(length - 1).isHighSurrogate() ? length - 1 : length;
}

}  // namespace

QString elidedLine(const QString& text, int maxChars) {
  const qsizetype newline = text.indexOf(QLatin1Char('\n'));
  const bool moreLines = newline >= 0 && newline + 1 < text.size();
  QString line = newline >= 0 ? text.left(newline) : text;
  while (!line.isEmpty() && line.back().isSpace()) line.chop(1);
  const qsizetype limit = qMax(1, maxChars);
  if (line.size() <= limit && !moreLines) return line;
  if (line.size() > limit - 1) line.truncate(safePrefix(line, limit - 1));
  return line + kEllipsis;
}

QString tooltipText(const QString& text) {
  QStringList lines;
  for (QString rest : text.split(QLatin1Char('\n'))) {
    while (rest.size() > kToolTipLineChars) {
      qsizetype cut = rest.lastIndexOf(QLatin1Char(' '), kToolTipLineChars);
      if (cut <= 0) cut = safePrefix(rest, kToolTipLineChars);
      lines.append(rest.left(cut));
      rest = rest.mid(cut).trimmed();
    }
    lines.append(rest);
  }
  return lines.join(QLatin1Char('\n'));
}

}  // namespace ringside::gui
