// ConfigDiff: the config diff table of the run comparison, as pure logic (Qt Core only). Each run
// brings its flat config JSON object (RunRecord.configJson: the trainer's run-spec keys plus
// "ranks_per_node" and "hosts"); the diff lists every key of any run once, sorted, with each run's
// value as text and whether the runs disagree on it.
#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

namespace ringside::gui {

// The text shown for a key that a run's config does not have (U+2014 EM DASH).
inline const QString kConfigValueMissing = QStringLiteral("\u2014");

struct ConfigDiffRow {
  QString key;
  QStringList values;    // one per run, in the order of the input; kConfigValueMissing if absent
  bool differs = false;  // true when the runs' values (or their presence) are not all equal
};

// One row per key of any of `configs`, keys sorted (byte order of the UTF-16 text, as QJsonObject
// sorts them). Values are compared as JSON values, so 0.1 and "0.1" differ while 3 and 3.0 do not;
// a key missing in some runs but present in others differs. With fewer than two configs nothing
// differs. Thread-safe (a pure function).
QList<ConfigDiffRow> configDiff(const QList<QJsonObject>& configs);

// The same from the runs' JSON text; text that is not a JSON object counts as an empty config.
QList<ConfigDiffRow> configDiffFromJson(const QStringList& configJsons);

// A config value as the table shows it: strings unquoted, integral numbers without a decimal
// point, other numbers with up to 10 significant digits, arrays and objects as compact JSON,
// null as "null".
QString configValueText(const QJsonValue& value);

}  // namespace ringside::gui
