// applyPreflight: a multi-node run starts only when every node is ready and runs the owner's agent
// version; the other GPU nodes get the first free GPUs they reported; every problem is listed
// with its node's name.
#include <QtTest>

#include "ringside/gui/preflight.h"

using namespace ringside;
using namespace ringside::gui;

namespace {

v1::RunSpec threeNodeSpec(uint32_t ranks) {
  v1::RunSpec spec;
  spec.set_ranks_per_node(ranks);
  // The trainer with the auto backend: GPUs on the GPU nodes, cores on the CPU node.
  spec.mutable_trainer()->mutable_config()->set_backend("auto");
  for (const char* host : {"gpu01", "gpu02", "cpu03"}) {
    v1::HostSlots* part = spec.add_hosts();
    part->set_host(host);
    part->set_ranks(ranks);
  }
  return spec;
}

PreflightAnswer answer(const char* name, const char* slotKind, std::vector<uint32_t> freeGpus,
                       const char* version = "0.1.0") {
  PreflightAnswer a;
  a.nodeName = QString::fromLatin1(name);
  a.reply.set_hostname(name);
  a.reply.set_agent_version(version);
  a.reply.set_slot_kind(slotKind);
  a.reply.set_free_slots(8);
  for (uint32_t gpu : freeGpus) a.reply.add_free_gpus(gpu);
  return a;
}

}  // namespace

class PreflightTest : public QObject {
  Q_OBJECT

 private slots:
  void readyNodesGetTheirFirstFreeGpus() {
    v1::RunSpec spec = threeNodeSpec(2);
    const QList<PreflightAnswer> answers = {answer("owner", "gpu", {0, 1, 2}),
                                            answer("second", "gpu", {1, 3, 5}),
                                            answer("third", "cpu", {})};
    QCOMPARE(applyPreflight(answers, &spec), QString());
    // The owner picks its own GPUs; a CPU node has none.
    QCOMPARE(spec.hosts(0).gpus_size(), 0);
    QCOMPARE(spec.hosts(1).gpus_size(), 2);
    QCOMPARE(spec.hosts(1).gpus(0), 1u);
    QCOMPARE(spec.hosts(1).gpus(1), 3u);
    QCOMPARE(spec.hosts(2).gpus_size(), 0);
  }

  void heldGpusAndEachNodesHoldGoIntoTheSpec() {
    v1::RunSpec spec = threeNodeSpec(2);
    QList<PreflightAnswer> answers = {answer("owner", "gpu", {0, 1, 2}),
                                      answer("second", "gpu", {1, 3, 5}),
                                      answer("third", "cpu", {})};
    // The second node held GPUs 3 and 5 for the run: those, not its first free ones.
    answers[1].reply.add_reserved_gpus(3);
    answers[1].reply.add_reserved_gpus(5);
    const char* ids[] = {"00000000000000000000000000000000", "11111111111111111111111111111111",
                         "22222222222222222222222222222222"};
    for (int i = 0; i < 3; ++i) answers[i].reply.set_reservation_id(ids[i]);
    QCOMPARE(applyPreflight(answers, &spec), QString());
    QCOMPARE(spec.hosts(1).gpus_size(), 2);
    QCOMPARE(spec.hosts(1).gpus(0), 3u);
    QCOMPARE(spec.hosts(1).gpus(1), 5u);
    for (int i = 0; i < 3; ++i) QCOMPARE(spec.hosts(i).reservation_id(), std::string(ids[i]));
  }

  void everyProblemIsListedWithItsNode() {
    v1::RunSpec spec = threeNodeSpec(2);
    const v1::RunSpec before = spec;
    QList<PreflightAnswer> answers = {answer("owner", "gpu", {0, 1}),
                                      answer("second", "gpu", {4, 5}), answer("third", "cpu", {})};
    answers[1].reply.add_problems("dataset directory /data does not exist on this node");
    answers[2].reply.add_problems("trainer binary '/x' does not exist or is not executable");
    answers[2].reply.add_problems("the run needs 2 slots here but 1 are free");
    const QString message = applyPreflight(answers, &spec);
    QVERIFY(message.contains(QStringLiteral("nothing was launched")));
    QVERIFY2(message.contains(QStringLiteral("second: dataset directory /data")),
             qPrintable(message));
    QVERIFY(message.contains(QStringLiteral("third: trainer binary '/x'")));
    QVERIFY(message.contains(QStringLiteral("third: the run needs 2 slots")));
    QVERIFY(!message.contains(QStringLiteral("owner:")));
    QCOMPARE(spec.SerializeAsString(), before.SerializeAsString());  // unchanged
  }

  void aDifferentAgentVersionNamesBothNodesAndVersions() {
    v1::RunSpec spec = threeNodeSpec(1);
    const QList<PreflightAnswer> answers = {answer("owner", "cpu", {}, "0.2.0"),
                                            answer("second", "cpu", {}, "0.2.0"),
                                            answer("third", "cpu", {}, "0.1.9")};
    const QString message = applyPreflight(answers, &spec);
    QVERIFY2(
        message.contains(QStringLiteral("third")) && message.contains(QStringLiteral("0.1.9")) &&
            message.contains(QStringLiteral("owner")) && message.contains(QStringLiteral("0.2.0")),
        qPrintable(message));
    QVERIFY(!message.contains(QStringLiteral("second:")));
  }

  void tooFewFreeGpusOnAnotherNodeIsAProblem() {
    v1::RunSpec spec = threeNodeSpec(2);
    const QList<PreflightAnswer> answers = {
        answer("owner", "gpu", {0, 1}), answer("second", "gpu", {7}), answer("third", "cpu", {})};
    const QString message = applyPreflight(answers, &spec);
    QVERIFY2(message.contains(QStringLiteral("second:")), qPrintable(message));
    QCOMPARE(spec.hosts(1).gpus_size(), 0);
  }

  void answersMustMatchTheHosts() {
    v1::RunSpec spec = threeNodeSpec(1);
    QVERIFY(!applyPreflight({answer("owner", "cpu", {})}, &spec).isEmpty());
    QVERIFY(!applyPreflight({}, &spec).isEmpty());
  }
};

QTEST_GUILESS_MAIN(PreflightTest)
#include "preflight_test.moc"
