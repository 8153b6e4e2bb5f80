#include "ringside/gui/node_settings.h"

#include <QCoreApplication>
#include <QProcess>
#include <algorithm>

namespace ringside::gui {

namespace {

// lupdate files the tr() calls of free functions under their namespace, so that is the context.
QString tr(const char* text) { return QCoreApplication::translate("ringside::gui", text); }

// Linux's IFNAMSIZ is 16 bytes with the terminating NUL.
constexpr qsizetype kMaxInterfaceName = 15;

bool isInterfaceChar(QChar c) {
  return (c >= QLatin1Char('a') && c <= QLatin1Char('z')) ||
         (c >= QLatin1Char('A') && c <= QLatin1Char('Z')) ||
         (c >= QLatin1Char('0') && c <= QLatin1Char('9')) || c == QLatin1Char('_') ||
         c == QLatin1Char('.') || c == QLatin1Char(':') || c == QLatin1Char('-');
}

// A decimal number of 1 to `maxDigits` digits no larger than `max`.
bool isNumberUpTo(const QString& text, int maxDigits, int max) {
  if (text.isEmpty() || text.size() > maxDigits) return false;
  if (!std::all_of(text.begin(), text.end(), [](QChar c) { return c.isDigit(); })) return false;
  return text.toInt() <= max;
}

bool isIpv4Subnet(const QString& value) {
  const QStringList parts = value.split(QLatin1Char('/'));
  if (parts.size() != 2 || !isNumberUpTo(parts[1], 2, 32)) return false;
  const QStringList octets = parts[0].split(QLatin1Char('.'));
  return octets.size() == 4 && std::all_of(octets.begin(), octets.end(), [](const QString& o) {
           return isNumberUpTo(o, 3, 255);
         });
}

}  // namespace

QString networkInterfaceError(const QString& value) {
  if (value.isEmpty()) return {};
  if (value.contains(QLatin1Char('/'))) {
    if (isIpv4Subnet(value)) return {};
    return tr("\"%1\" is not an IPv4 subnet: write it like 10.0.0.0/24.").arg(value);
  }
  if (value.size() <= kMaxInterfaceName && !value.startsWith(QLatin1Char('-')) &&
      std::all_of(value.begin(), value.end(), isInterfaceChar)) {
    return {};
  }
  return tr("\"%1\" is not a network interface name: enter one like eth1 (up to 15 letters, "
            "digits and _ . : -, not starting with -) or a subnet like 10.0.0.0/24.")
      .arg(value);
}

QStringList splitMpirunOptions(const QString& options) { return QProcess::splitCommand(options); }

QString mpirunOptionsError(const QString& options) {
  const QStringList words = splitMpirunOptions(options);
  if (words.isEmpty() || words.first().startsWith(QLatin1Char('-'))) return {};
  return tr("mpirun options must start with an option (a word beginning with -), not \"%1\"; "
            "e.g. --mca btl_tcp_links 2.")
      .arg(words.first());
}

}  // namespace ringside::gui
