// `ringside --local-cluster`: the JSON document `scripts/local-cluster up N` prints, read into
// nodes, with a message that says what to do for a missing file, bad JSON and each missing or
// wrong field; and the cluster's client keypair from its secret key file.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "ringside/common/curve.h"
#include "ringside/gui/gui_keys.h"
#include "ringside/gui/local_cluster.h"

using namespace ringside;
using namespace ringside::gui;

class LocalClusterTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  curve::KeyPair agentKeys_, clientKeys_;

  // What `scripts/local-cluster up 2` prints (cluster_json in the script).
  QJsonObject document() const {
    QJsonArray nodes;
    for (int i = 1; i <= 2; ++i) {
      const QString address = QStringLiteral("10.213.77.%1").arg(10 + i);
      nodes.append(QJsonObject{{"name", QStringLiteral("node-%1").arg(i)},
                               {"address", address},
                               {"control", QStringLiteral("tcp://%1:47600").arg(address)},
                               {"events", QStringLiteral("tcp://%1:47601").arg(address)},
                               {"agent_public_key", QString::fromStdString(agentKeys_.publicKey)}});
    }
    return QJsonObject{{"nodes", nodes},
                       {"client_public_key", QString::fromStdString(clientKeys_.publicKey)},
                       {"client_secret_key_file", dir_.filePath("client.key_secret")}};
  }

  static QByteArray json(const QJsonObject& object) { return QJsonDocument(object).toJson(); }

  // The message of parsing `object`, which must fail.
  static QString errorOf(const QByteArray& text) {
    auto cluster = parseLocalCluster(text, QStringLiteral("cluster.json"));
    if (cluster.isOk()) return {};
    return QString::fromStdString(cluster.status().message());
  }

  static bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
  }

 private slots:
  void initTestCase() {
    auto agent = curve::generateKeyPair();
    auto client = curve::generateKeyPair();
    QVERIFY(agent.isOk() && client.isOk());
    agentKeys_ = *agent;
    clientKeys_ = *client;
  }

  void readsTheScriptsDocument() {
    const QString file = dir_.filePath("cluster.json");
    QVERIFY(writeFile(file, json(document())));
    auto cluster = readLocalCluster(file);
    QVERIFY2(cluster.isOk(), cluster.status().message().c_str());
    QCOMPARE(cluster->nodes.size(), 2);
    const LocalClusterNode& second = cluster->nodes[1];
    QCOMPARE(second.name, QStringLiteral("node-2"));
    QCOMPARE(second.address, QStringLiteral("10.213.77.12"));
    QCOMPARE(second.host, QStringLiteral("10.213.77.12"));
    QCOMPARE(second.controlPort, 47600);
    QCOMPARE(second.eventsPort, 47601);
    QCOMPARE(second.agentPublicKey, QString::fromStdString(agentKeys_.publicKey));
    QCOMPARE(cluster->clientPublicKey, QString::fromStdString(clientKeys_.publicKey));
    QCOMPARE(cluster->clientSecretKeyFile, dir_.filePath("client.key_secret"));
  }

  void aMissingFileSaysToStartTheCluster() {
    auto cluster = readLocalCluster(dir_.filePath("absent.json"));
    QVERIFY(!cluster.isOk());
    QCOMPARE(cluster.status().code(), Status::Code::kNotFound);
    const QString message = QString::fromStdString(cluster.status().message());
    QVERIFY2(message.contains(dir_.filePath("absent.json")) &&
                 message.contains(QStringLiteral("scripts/local-cluster up 3")),
             qPrintable(message));
  }

  void badDocumentsAreNamed_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");  // part of the message
    QTest::newRow("not JSON") << QByteArray("{\"nodes\": [") << "not valid JSON";
    QTest::newRow("not an object") << QByteArray("[1, 2]") << "not a JSON object";
    QTest::newRow("empty file") << QByteArray() << "not valid JSON";
    QJsonObject noNodes = document();
    noNodes.remove("nodes");
    QTest::newRow("no nodes") << json(noNodes) << "\"nodes\"";
    QJsonObject emptyNodes = document();
    emptyNodes["nodes"] = QJsonArray();
    QTest::newRow("empty nodes") << json(emptyNodes) << "\"nodes\"";
    for (const char* key : {"name", "control", "events", "agent_public_key"}) {
      QJsonObject missing = document();
      QJsonArray nodes = missing["nodes"].toArray();
      QJsonObject second = nodes[1].toObject();
      second.remove(key);
      nodes[1] = second;
      missing["nodes"] = nodes;
      // Named by the node's name, or by its position when the name is what is missing.
      const QString node = QString::fromLatin1(key) == "name" ? "node 2" : "node-2";
      QTest::newRow(key) << json(missing)
                         << QStringLiteral("%1 has no \"%2\"").arg(node, QString::fromLatin1(key));
    }
    QJsonObject badEndpoint = document();
    QJsonArray nodes = badEndpoint["nodes"].toArray();
    QJsonObject first = nodes[0].toObject();
    first["control"] = "10.213.77.11:47600";
    nodes[0] = first;
    badEndpoint["nodes"] = nodes;
    QTest::newRow("endpoint") << json(badEndpoint) << "tcp://HOST:PORT";
    QJsonObject badKey = document();
    nodes = badKey["nodes"].toArray();
    first = nodes[0].toObject();
    first["agent_public_key"] = "short";
    nodes[0] = first;
    badKey["nodes"] = nodes;
    QTest::newRow("agent key") << json(badKey) << "\"agent_public_key\" of node-1";
    QJsonObject twice = document();
    nodes = twice["nodes"].toArray();
    nodes.append(nodes[0]);
    twice["nodes"] = nodes;
    QTest::newRow("duplicate name") << json(twice) << "two nodes are named node-1";
    QJsonObject noSecret = document();
    noSecret.remove("client_secret_key_file");
    QTest::newRow("no secret key file") << json(noSecret) << "\"client_secret_key_file\"";
  }
  void badDocumentsAreNamed() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    const QString message = errorOf(text);
    QVERIFY2(message.contains(expected), qPrintable(message));
    // Every message names the file and says how to get a good one.
    QVERIFY2(message.contains(QStringLiteral("cluster.json")) &&
                 message.contains(QStringLiteral("scripts/local-cluster up 3")),
             qPrintable(message));
  }

  void anOversizedFileIsRefused() {
    const QString file = dir_.filePath("huge.json");
    QVERIFY(writeFile(file, QByteArray(kMaxLocalClusterFileBytes + 1, ' ')));
    auto cluster = readLocalCluster(file);
    QVERIFY(!cluster.isOk());
    QCOMPARE(cluster.status().code(), Status::Code::kInvalidArgument);
  }

  void theClientKeypairComesFromTheSecretKeyFile() {
    auto cluster = parseLocalCluster(json(document()), QStringLiteral("cluster.json"));
    QVERIFY(cluster.isOk());
    // No file yet.
    auto keys = localClusterClientKeys(*cluster);
    QVERIFY(!keys.isOk());
    QCOMPARE(keys.status().code(), Status::Code::kNotFound);
    QVERIFY2(QString::fromStdString(keys.status().message())
                 .contains(QStringLiteral("scripts/local-cluster up 3")),
             keys.status().message().c_str());
    // The file as the agent's create-keypair writes it: the secret key and a newline.
    const QString secretFile = cluster->clientSecretKeyFile;
    QVERIFY(writeFile(secretFile, QByteArray::fromStdString(clientKeys_.secretKey + "\n")));
    keys = localClusterClientKeys(*cluster);
    QVERIFY2(keys.isOk(), keys.status().message().c_str());
    QCOMPARE(keys->publicKey, clientKeys_.publicKey);  // derived from the secret
    QCOMPARE(keys->secretKey, clientKeys_.secretKey);
    // A key file of another cluster.
    cluster->clientPublicKey = QString::fromStdString(agentKeys_.publicKey);
    keys = localClusterClientKeys(*cluster);
    QVERIFY(!keys.isOk());
    QVERIFY2(QString::fromStdString(keys.status().message()).contains("another cluster"),
             keys.status().message().c_str());
    // Not a key.
    QVERIFY(writeFile(secretFile, "not a key\n"));
    auto garbage = loadClientKeyFile(secretFile);
    QVERIFY(!garbage.isOk());
    QCOMPARE(garbage.status().code(), Status::Code::kInvalidArgument);
    QVERIFY2(QString::fromStdString(garbage.status().message()).contains(secretFile),
             garbage.status().message().c_str());
  }
};

QTEST_GUILESS_MAIN(LocalClusterTest)
#include "local_cluster_test.moc"
