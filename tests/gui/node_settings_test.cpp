// A node's launch settings: the network interface check (the same rules the agent applies before
// mpirun) and the mpirun options check and split.
#include <QtTest>

#include "ringside/gui/node_settings.h"

using namespace ringside::gui;

class NodeSettingsTest : public QObject {
  Q_OBJECT

 private slots:
  void networkInterfaceAccepts_data() {
    QTest::addColumn<QString>("value");
    for (const char* value :
         {"", "eth1", "ib0", "enp3s0f1", "eth0.100", "br-lan_2", "veth:1", "abcdefghijklmno",
          "10.0.0.0/24", "192.168.1.0/0", "0.0.0.0/32", "255.255.255.255/8"}) {
      QTest::newRow(value) << QString::fromLatin1(value);
    }
  }
  void networkInterfaceAccepts() {
    QFETCH(QString, value);
    QVERIFY2(networkInterfaceError(value).isEmpty(), qPrintable(networkInterfaceError(value)));
  }

  void networkInterfaceRefuses_data() {
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("hint");
    QTest::newRow("too long") << "abcdefghijklmnop"
                              << "eth1";
    QTest::newRow("leading dash") << "-eth1"
                                  << "eth1";
    QTest::newRow("space") << "eth 1"
                           << "eth1";
    QTest::newRow("shell") << "eth1;rm"
                           << "eth1";
    QTest::newRow("non-ascii") << QString::fromUtf8("ethä") << "eth1";
    QTest::newRow("bits above 32") << "10.0.0.0/33"
                                   << "10.0.0.0/24";
    QTest::newRow("octet above 255") << "10.0.0.256/24"
                                     << "10.0.0.0/24";
    QTest::newRow("three octets") << "10.0.0/24"
                                  << "10.0.0.0/24";
    QTest::newRow("no bits") << "10.0.0.0/"
                             << "10.0.0.0/24";
    QTest::newRow("IPv6") << "fd00::/64"
                          << "10.0.0.0/24";
    QTest::newRow("two slashes") << "10.0.0.0/24/1"
                                 << "10.0.0.0/24";
  }
  void networkInterfaceRefuses() {
    QFETCH(QString, value);
    QFETCH(QString, hint);
    const QString message = networkInterfaceError(value);
    // The message names the value and shows what to write instead.
    QVERIFY2(message.contains(value) && message.contains(hint), qPrintable(message));
  }

  void mpirunOptionsStartWithAnOption() {
    QVERIFY(mpirunOptionsError({}).isEmpty());
    QVERIFY(mpirunOptionsError(QStringLiteral("   ")).isEmpty());
    QVERIFY(mpirunOptionsError(QStringLiteral("--mca btl_tcp_links 2")).isEmpty());
    QVERIFY(mpirunOptionsError(QStringLiteral("-x NCCL_DEBUG=INFO")).isEmpty());
    const QString message = mpirunOptionsError(QStringLiteral("hostname --mca a b"));
    QVERIFY2(message.contains(QStringLiteral("\"hostname\"")), qPrintable(message));
    QCOMPARE(splitMpirunOptions(QStringLiteral("--mca plm_rsh_args \"-p 2222\"")),
             (QStringList{"--mca", "plm_rsh_args", "-p 2222"}));
    QVERIFY(splitMpirunOptions({}).isEmpty());
  }
};

QTEST_GUILESS_MAIN(NodeSettingsTest)
#include "node_settings_test.moc"
