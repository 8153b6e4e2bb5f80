// ConfigDiff: keys sorted and listed once, values as text, differs flags, missing keys.
#include <QtTest/QtTest>

#include "ringside/gui/config_diff.h"

using namespace ringside::gui;

class ConfigDiffTest : public QObject {
  Q_OBJECT

 private slots:
  void keysAreSortedAndFlaggedWhenValuesDiffer() {
    const QList<ConfigDiffRow> rows = configDiffFromJson({
        R"({"lr":0.1,"epochs":3,"optimizer":"sgd","hidden":[256,128]})",
        R"({"lr":0.05,"epochs":3,"optimizer":"sgd","hidden":[256,128]})",
    });
    QCOMPARE(rows.size(), 4);
    QCOMPARE(rows[0].key, QStringLiteral("epochs"));
    QCOMPARE(rows[1].key, QStringLiteral("hidden"));
    QCOMPARE(rows[2].key, QStringLiteral("lr"));
    QCOMPARE(rows[3].key, QStringLiteral("optimizer"));
    QVERIFY(!rows[0].differs);
    QVERIFY(!rows[1].differs);
    QVERIFY(rows[2].differs);
    QVERIFY(!rows[3].differs);
    QCOMPARE(rows[0].values, (QStringList{"3", "3"}));
    QCOMPARE(rows[1].values, (QStringList{"[256,128]", "[256,128]"}));
    QCOMPARE(rows[2].values, (QStringList{"0.1", "0.05"}));
    QCOMPARE(rows[3].values, (QStringList{"sgd", "sgd"}));
  }

  void missingKeysShowADashAndDiffer() {
    const QList<ConfigDiffRow> rows = configDiffFromJson({
        R"({"lr":0.1,"beta1":0.9})",
        R"({"lr":0.1})",
        R"({"lr":0.1,"momentum":0.9})",
    });
    QCOMPARE(rows.size(), 3);
    QCOMPARE(rows[0].key, QStringLiteral("beta1"));
    QCOMPARE(rows[0].values, (QStringList{"0.9", kConfigValueMissing, kConfigValueMissing}));
    QVERIFY(rows[0].differs);
    QCOMPARE(rows[1].key, QStringLiteral("lr"));
    QVERIFY(!rows[1].differs);
    QCOMPARE(rows[2].key, QStringLiteral("momentum"));
    QCOMPARE(rows[2].values, (QStringList{kConfigValueMissing, kConfigValueMissing, "0.9"}));
    QVERIFY(rows[2].differs);
    QCOMPARE(kConfigValueMissing, QString(QChar(0x2014)));
  }

  void valuesCompareAsJsonNotAsText() {
    // 3 and 3.0 are the same JSON number; 0.1 and "0.1" are not the same value.
    const QList<ConfigDiffRow> rows = configDiffFromJson({
        R"({"epochs":3,"lr":0.1,"nesterov":true,"seed":12345678901})",
        R"({"epochs":3.0,"lr":"0.1","nesterov":false,"seed":12345678901})",
    });
    QCOMPARE(rows.size(), 4);
    QVERIFY(!rows[0].differs);  // epochs
    QVERIFY(rows[1].differs);   // lr
    QCOMPARE(rows[1].values, (QStringList{"0.1", "0.1"}));
    QVERIFY(rows[2].differs);  // nesterov
    QCOMPARE(rows[2].values, (QStringList{"true", "false"}));
    QVERIFY(!rows[3].differs);
    QCOMPARE(rows[3].values.first(), QStringLiteral("12345678901"));
  }

  void aSingleConfigOrBrokenJsonNeverDiffers() {
    const QList<ConfigDiffRow> single = configDiffFromJson({R"({"lr":0.1,"epochs":2})"});
    QCOMPARE(single.size(), 2);
    for (const ConfigDiffRow& row : single) QVERIFY(!row.differs);

    // Text that is not a JSON object counts as an empty config.
    const QList<ConfigDiffRow> broken = configDiffFromJson({R"({"lr":0.1})", "not json"});
    QCOMPARE(broken.size(), 1);
    QVERIFY(broken[0].differs);
    QCOMPARE(broken[0].values, (QStringList{"0.1", kConfigValueMissing}));

    QVERIFY(configDiffFromJson({}).isEmpty());
  }

  void valueText() {
    QCOMPARE(configValueText(QJsonValue(0.001)), QStringLiteral("0.001"));
    QCOMPARE(configValueText(QJsonValue(128.0)), QStringLiteral("128"));
    QCOMPARE(configValueText(QJsonValue(-2.5e-7)), QStringLiteral("-2.5e-07"));
    QCOMPARE(configValueText(QJsonValue(QStringLiteral("cosine"))), QStringLiteral("cosine"));
    QCOMPARE(configValueText(QJsonValue(QJsonValue::Null)), QStringLiteral("null"));
    QCOMPARE(configValueText(QJsonObject{{"a", 1}}), QStringLiteral("{\"a\":1}"));
  }
};

QTEST_GUILESS_MAIN(ConfigDiffTest)
#include "config_diff_test.moc"
