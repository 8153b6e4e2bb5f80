#include "ringside/gui/config_diff.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <set>

namespace ringside::gui {

QString configValueText(const QJsonValue& value) {
  switch (value.type()) {
    case QJsonValue::Null:
      return QStringLiteral("null");
    case QJsonValue::Bool:
      return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: {
      const double number = value.toDouble();
      // Integral values up to 2^53 print exactly without an exponent (seeds, batch sizes).
      if (std::isfinite(number) && number == std::floor(number) && std::fabs(number) < 9.0e15) {
        return QString::number(static_cast<qint64>(number));
      }
      return QString::number(number, 'g', 10);
    }
    case QJsonValue::String:
      return value.toString();
    case QJsonValue::Array:
      return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object:
      return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Undefined:
      break;
  }
  return kConfigValueMissing;
}

QList<ConfigDiffRow> configDiff(const QList<QJsonObject>& configs) {
  std::set<QString> keys;
  for (const QJsonObject& config : configs) {
    for (auto it = config.begin(); it != config.end(); ++it) keys.insert(it.key());
  }
  QList<ConfigDiffRow> rows;
  rows.reserve(static_cast<qsizetype>(keys.size()));
  for (const QString& key : keys) {
    ConfigDiffRow row;
    row.key = key;
    bool first = true;
    bool firstPresent = false;
    QJsonValue firstValue;
    for (const QJsonObject& config : configs) {
      const auto it = config.constFind(key);
      const bool present = it != config.constEnd();
      const QJsonValue value = present ? it.value() : QJsonValue(QJsonValue::Undefined);
      row.values << (present ? configValueText(value) : kConfigValueMissing);
      if (first) {
        first = false;
        firstPresent = present;
        firstValue = value;
      } else if (present != firstPresent || (present && value != firstValue)) {
        row.differs = true;
      }
    }
    rows.append(row);
  }
  return rows;
}

QList<ConfigDiffRow> configDiffFromJson(const QStringList& configJsons) {
  QList<QJsonObject> configs;
  configs.reserve(configJsons.size());
  for (const QString& text : configJsons) {
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
    configs.append(doc.isObject() ? doc.object() : QJsonObject());
  }
  return configDiff(configs);
}

}  // namespace ringside::gui
