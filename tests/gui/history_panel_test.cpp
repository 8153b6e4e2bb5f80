// HistoryPanel: Clone emits the form of the run's stored spec, Compare needs two or more selected
// runs, Open follows double-click and Return. CompareView: overlaid, decimated series per run, the
// config diff's differing rows highlighted, and chart export as PNG and SVG. Under the German
// translation the State column fits "fehlgeschlagen" even when the first rows hold no failed run.
// With RINGSIDE_SCREENSHOT_DIR set, the panel and a compare view are also saved there as PNGs.
#include <QtTest/QtTest>

#include <QFontMetrics>
#include <QLineEdit>
#include <QLineSeries>
#include <QLocale>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTranslator>
#include <QXmlStreamReader>

#include <cmath>

#include "build_paths.h"
#include "gui_test_support.h"
#include "ringside/common/metric_names.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/run_table_model.h"
#include "ringside/gui/widgets/compare_metric_chart.h"
#include "ringside/gui/widgets/compare_view.h"
#include "ringside/gui/widgets/history_panel.h"
#include "ringside/gui/widgets/metric_chart.h"

using namespace ringside;
using namespace ringside::gui;

using ringside::gui::testing::ControllerInTempDir;

namespace {

template <typename T>
T await(QFuture<T> future) {
  future.waitForFinished();
  return future.result();
}

RunForm formOf(const QString& name, double lr, int epochs, int ranks) {
  RunForm form;
  form.name = name;
  form.tags = {QStringLiteral("fmnist")};
  form.lr = lr;
  form.epochs = epochs;
  form.ranksPerNode = ranks;
  form.hidden = {512, 256};
  form.optimizer = lr < 0.01 ? QStringLiteral("adamw") : QStringLiteral("sgd");
  return form;
}

v1::RunInfo runInfo(const QString& runId, const RunForm& form, v1::RunState state, double start,
                    double end) {
  v1::RunInfo run;
  run.set_run_id(runId.toStdString());
  *run.mutable_spec() = toRunSpec(form);
  run.set_state(state);
  run.set_world_size(form.ranksPerNode);
  run.set_created_time(start - 2);
  run.set_start_time(start);
  run.set_end_time(end);
  return run;
}

// A training curve of `steps` steps: loss decaying to `finalLoss`, accuracy per epoch, throughput
// and step time with noise.
IngestBatch curves(const QString& runId, int steps, double finalLoss, double accuracy,
                   double samplesPerS, double stepMs) {
  IngestBatch batch;
  batch.runId = runId;
  uint64_t seq = 1;
  auto add = [&](int64_t step, const char* name, double value) {
    v1::MetricSample s;
    s.set_seq(seq++);
    s.set_step(step);
    s.set_epoch(step * 3 / steps);
    s.set_wall_time(1'700'000'000.0 + step * 0.01);
    s.set_rank(-1);
    s.set_name(name);
    s.set_value(value);
    batch.samples.push_back(s);
  };
  for (int step = 1; step <= steps; ++step) {
    const double noise = std::sin(step * 12.9898) * 0.5 + 0.5;
    add(step, metric::kTrainLoss, finalLoss + 2.0 * std::exp(-step * 5.0 / steps) + 0.1 * noise);
    add(step, metric::kTrainSamplesPerS, samplesPerS * (0.95 + 0.1 * noise));
    add(step, metric::kStepMs, stepMs * (0.9 + 0.2 * noise));
    if (step % 100 == 0) add(step, "custom/grad_norm", 1.0 / step);  // a script's own metric
    if (step % (steps / 3) == 0) {
      add(step, metric::kTestAccuracy, accuracy - 0.05 * (3 - step * 3 / steps));
    }
  }
  return batch;
}

// The finished, singular messages of a Qt Linguist .ts file as a translator. The app's .qm is built
// only with the app target (into its resources); the test reads the .ts it is compiled from.
class TsTranslator : public QTranslator {
 public:
  bool loadTs(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return false;
    QXmlStreamReader xml(&file);
    QString context;
    QString source;
    while (!xml.atEnd()) {
      if (xml.readNext() != QXmlStreamReader::StartElement) continue;
      if (xml.name() == QLatin1String("name")) {
        context = xml.readElementText();
      } else if (xml.name() == QLatin1String("source")) {
        source = xml.readElementText();
      } else if (xml.name() == QLatin1String("translation")) {
        const QString type = xml.attributes().value(QLatin1String("type")).toString();
        const QString text = xml.readElementText(QXmlStreamReader::SkipChildElements);
        if (type.isEmpty() && !text.trimmed().isEmpty()) messages_.insert({context, source}, text);
      }
    }
    if (xml.hasError()) qWarning("%s: %s", qPrintable(path), qPrintable(xml.errorString()));
    return !xml.hasError() && !messages_.isEmpty();
  }
  QString translate(const char* context, const char* sourceText, const char* /*disambiguation*/,
                    int /*n*/) const override {
    return messages_.value({QString::fromUtf8(context), QString::fromUtf8(sourceText)});
  }
  bool isEmpty() const override { return messages_.isEmpty(); }

 private:
  QHash<QPair<QString, QString>, QString> messages_;
};

QPushButton* button(QWidget& parent, const char* objectName) {
  return parent.findChild<QPushButton*>(QString::fromLatin1(objectName));
}

void showActive(QWidget& widget) {
  widget.show();
  widget.activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(&widget));
}

void saveScreenshot(QWidget& widget, const QString& name) {
  const QString dir = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  QVERIFY(widget.grab().save(QDir(dir).filePath(name)));
}

}  // namespace

class HistoryPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    fixture_ = std::make_unique<ControllerInTempDir>();
    controller_ = &fixture_->controller;
    const Status started = controller_->start();
    QVERIFY2(started.isOk(), started.toString().c_str());
    MetricsStore& store = controller_->store();
    forms_ = {formOf("fmnist baseline", 0.1, 3, 2), formOf("fmnist adamw", 0.001, 5, 4),
              formOf("fmnist long", 0.1, 10, 2)};
    const double t0 = 1'767'000'000.0;
    QVERIFY(
        await(store.upsertRun("n1", runInfo("r-1", forms_[0], v1::COMPLETED, t0, t0 + 95))).isOk());
    QVERIFY(
        await(store.upsertRun("n1", runInfo("r-2", forms_[1], v1::COMPLETED, t0 + 200, t0 + 420)))
            .isOk());
    QVERIFY(await(store.upsertRun("n1", runInfo("r-3", forms_[2], v1::FAILED, t0 + 600, t0 + 660)))
                .isOk());
    QVERIFY(await(store.ingest(curves("r-1", 20000, 0.35, 0.86, 41000, 3.1))).isOk());
    QVERIFY(await(store.ingest(curves("r-2", 12000, 0.28, 0.89, 23000, 5.6))).isOk());
    QVERIFY(await(store.setNotes("r-3", "out of memory on rank 1")).isOk());
  }
  void cleanupTestCase() {
    controller_ = nullptr;
    fixture_.reset();
  }

  void cloneEmitsTheFormOfTheStoredSpec() {
    HistoryPanel panel(*controller_);
    panel.resize(1100, 420);
    showActive(panel);  // shortcuts need a visible, active window
    QTRY_COMPARE(panel.model()->rowCount(), 3);
    QSignalSpy clone(&panel, &HistoryPanel::cloneRequested);
    QPushButton* cloneButton = button(panel, "cloneButton");
    QVERIFY(cloneButton != nullptr);
    QVERIFY(!cloneButton->isEnabled());

    panel.selectRuns({"r-2"});
    QCOMPARE(panel.selectedRunIds(), QStringList{"r-2"});
    QVERIFY(cloneButton->isEnabled());
    cloneButton->click();
    QCOMPARE(clone.count(), 1);
    const RunForm emitted = qvariant_cast<RunForm>(clone.first().first());
    const RunForm expected = fromRunSpec(toRunSpec(forms_[1]));
    QCOMPARE(toPreset(emitted), toPreset(expected));
    QCOMPARE(emitted.lr, 0.001);
    QCOMPARE(emitted.epochs, 5);
    QCOMPARE(emitted.ranksPerNode, 4);
    QCOMPARE(emitted.name, QStringLiteral("fmnist adamw"));

    // Ctrl+D clones too; with two runs selected Clone is disabled.
    QTest::keyClick(panel.table(), Qt::Key_D, Qt::ControlModifier);
    QCOMPARE(clone.count(), 2);
    panel.selectRuns({"r-1", "r-2"});
    QVERIFY(!cloneButton->isEnabled());
    panel.cloneSelected();
    QCOMPARE(clone.count(), 2);
  }

  void compareNeedsTwoOrMoreSelected() {
    HistoryPanel panel(*controller_);
    showActive(panel);
    QTRY_COMPARE(panel.model()->rowCount(), 3);
    QSignalSpy compare(&panel, &HistoryPanel::compareRequested);
    QPushButton* compareButton = button(panel, "compareButton");
    QVERIFY(compareButton != nullptr);

    QVERIFY(!compareButton->isEnabled());
    panel.selectRuns({"r-1"});
    QVERIFY(!compareButton->isEnabled());
    panel.compareSelected();
    QCOMPARE(compare.count(), 0);

    panel.selectRuns({"r-1", "r-3"});
    QVERIFY(compareButton->isEnabled());
    compareButton->click();
    QCOMPARE(compare.count(), 1);
    QStringList ids = compare.first().first().toStringList();
    ids.sort();
    QCOMPARE(ids, (QStringList{"r-1", "r-3"}));

    panel.selectRuns({"r-1", "r-2", "r-3"});
    QTest::keyClick(panel.table(), Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(compare.count(), 2);
    QCOMPARE(compare.last().first().toStringList().size(), 3);
  }

  void openFollowsReturnAndDoubleClick() {
    HistoryPanel panel(*controller_);
    panel.resize(1100, 420);
    showActive(panel);
    QTRY_COMPARE(panel.model()->rowCount(), 3);
    QSignalSpy open(&panel, &HistoryPanel::openRunRequested);
    panel.selectRuns({"r-3"});
    panel.table()->setFocus();
    QTest::keyClick(panel.table(), Qt::Key_Return);
    QCOMPARE(open.count(), 1);
    QCOMPARE(open.first().first().toString(), QStringLiteral("r-3"));

    QTableView* table = panel.table();
    const QModelIndex name = table->model()->index(0, RunTableModel::kName);
    const QPoint center = table->visualRect(name).center();
    // A double-click is a press and release, then the double-click event.
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, center);
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, center);
    QCOMPARE(open.count(), 2);
    QCOMPARE(open.last().first().toString(), name.data(RunTableModel::kRunIdRole).toString());
    // A double-click on the notes cell edits it instead.
    const QModelIndex notes = table->model()->index(0, RunTableModel::kNotes);
    table->scrollTo(notes);
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(notes).center());
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(notes).center());
    QCOMPARE(open.count(), 2);
    bool editorOpen = false;
    for (QLineEdit* editor : table->viewport()->findChildren<QLineEdit*>()) {
      editorOpen |= editor->isVisible();
    }
    QVERIFY(editorOpen);
  }

  void renderPanel() {
    HistoryPanel panel(*controller_);
    panel.resize(1200, 360);
    QTRY_COMPARE(panel.model()->rowCount(), 3);
    panel.selectRuns({"r-1", "r-2"});
    saveScreenshot(panel, "history_panel.png");
  }

  // Regression: the State column was fitted once, to the first rows; under --lang de a failed
  // run arriving later showed a cut-off "fehlgeschlagen".
  void stateColumnFitsTheLongestTranslatedState() {
    const QLocale saved;
    QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
    TsTranslator german;
    QVERIFY(german.loadTs(QString::fromUtf8(ringside::test::translationDe())));
    QVERIFY(QCoreApplication::installTranslator(&german));
    const auto restore = qScopeGuard([&] {
      QCoreApplication::removeTranslator(&german);
      QLocale::setDefault(saved);
    });
    const QString failed = RunTableModel::stateText(v1::FAILED);
    QCOMPARE(failed, QStringLiteral("fehlgeschlagen"));
    QString longest;
    for (int state = v1::RunState_MIN; state <= v1::RunState_MAX; ++state) {
      const QString text = RunTableModel::stateText(static_cast<v1::RunState>(state));
      if (text.size() > longest.size()) longest = text;
    }

    // A history whose first rows are all completed runs ("fertig").
    ControllerInTempDir fixture;
    Controller& controller = fixture.controller;
    QVERIFY(controller.start().isOk());
    const double t0 = 1'767'000'000.0;
    QVERIFY(await(controller.store().upsertRun(
                      "n1", runInfo("r-ok", forms_[0], v1::COMPLETED, t0, t0 + 95)))
                .isOk());
    HistoryPanel panel(controller);
    panel.resize(1100, 360);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTRY_COMPARE(panel.model()->rowCount(), 1);
    QTableView* table = panel.table();
    const QFontMetrics metrics(table->font());
    // At least the panel's padding of 12 px beside the text (the style's cell margins add more).
    constexpr int kPadding = 12;
    for (const QString& text : {longest, failed}) {
      QVERIFY2(
          table->columnWidth(RunTableModel::kState) >= metrics.horizontalAdvance(text) + kPadding,
          qPrintable(QStringLiteral("%1 px for \"%2\" (%3 px)")
                         .arg(table->columnWidth(RunTableModel::kState))
                         .arg(text)
                         .arg(metrics.horizontalAdvance(text))));
    }

    // The failed run arrives: its cell text fits the column as it is.
    QVERIFY(await(controller.store().upsertRun(
                      "n1", runInfo("r-bad", forms_[2], v1::FAILED, t0 + 600, t0 + 660)))
                .isOk());
    QTRY_COMPARE(panel.model()->rowCount(), 2);
    const int row = panel.proxy()
                        ->mapFromSource(panel.model()->index(panel.model()->rowOfRun("r-bad"), 0))
                        .row();
    const QModelIndex cell = table->model()->index(row, RunTableModel::kState);
    QCOMPARE(cell.data().toString(), failed);
    const QAbstractItemView* view = table;  // sizeHintForColumn is public there
    QVERIFY(view->sizeHintForColumn(RunTableModel::kState) <=
            table->columnWidth(RunTableModel::kState));
    saveScreenshot(panel, "history_panel_de.png");
  }

  void compareViewOverlaysDecimatedSeriesAndDiffsTheConfig() {
    CompareView view(*controller_, {"r-1", "r-2", "r-3"});
    view.resize(1400, 1000);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QTRY_VERIFY(view.loaded());
    QTest::qWait(100);  // a redraw tick after the final layout

    const QString loss = QString::fromLatin1(metric::kTrainLoss);
    MetricChart* chart = view.chart(loss);
    QVERIFY(chart != nullptr);
    chart->replotNow();
    const int columns = chart->plotColumns();
    QVERIFY2(columns > 100, qPrintable(QString::number(columns)));
    for (int run : {0, 1}) {
      const int drawn = view.drawnPointCount(loss, run);
      QVERIFY2(drawn > columns / 2, qPrintable(QString::number(drawn)));
      QVERIFY2(drawn <= 2 * columns + 2, qPrintable(QString::number(drawn)));
    }
    QCOMPARE(view.drawnPointCount(loss, 2), 0);  // the failed run has no samples
    QCOMPARE(view.drawnPointCount(QString::fromLatin1(metric::kTestAccuracy), 0), 3);

    QTableWidget* config = view.configTable();
    QCOMPARE(config->columnCount(), 3);
    bool lrDiffers = false;
    bool dataDirSame = false;
    for (int row = 0; row < config->rowCount(); ++row) {
      const QString key = config->verticalHeaderItem(row)->text();
      const bool bold = config->item(row, 0)->font().bold();
      if (key == QLatin1String("lr")) {
        lrDiffers = bold && config->item(row, 1)->text() == QLatin1String("0.001");
      }
      if (key == QLatin1String("data_dir") || key == QLatin1String("data")) dataDirSame = !bold;
    }
    QVERIFY(lrDiffers);
    QVERIFY(dataDirSame);
    QCOMPARE(view.summaryTable()->columnCount(), 3);

    QTemporaryDir out;
    Status status = view.exportChartPng(loss, out.filePath("loss.png"));
    QVERIFY2(status.isOk(), status.toString().c_str());
    QVERIFY(QImage(out.filePath("loss.png")).width() > 100);
    status = view.exportChartSvg(loss, out.filePath("loss.svg"));
    QVERIFY2(status.isOk(), status.toString().c_str());
    QFile svg(out.filePath("loss.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray text = svg.readAll();
    QVERIFY(text.count("<polyline") >= 2);  // one per run with data (MetricChart's format)
    QVERIFY(text.contains(CompareView::runColor(0).name().toLatin1()));
    QVERIFY(text.contains(CompareView::runColor(1).name().toLatin1()));
    QVERIFY(text.contains("fmnist adamw"));
    QCOMPARE(view.exportChartSvg(loss, out.filePath("missing/folder/loss.svg")).code(),
             Status::Code::kIOError);
    QCOMPARE(view.exportChartSvg("no/such", out.filePath("x.svg")).code(), Status::Code::kNotFound);

    // Any other metric the runs logged is one choice away in the metric chart.
    CompareMetricChart* metrics = view.metricChart();
    QTRY_VERIFY(metrics->loaded() && !metrics->metricNames().isEmpty());
    QVERIFY2(metrics->metricNames().contains(QStringLiteral("custom/grad_norm")),
             qPrintable(metrics->metricNames().join(QLatin1Char(' '))));
    QCOMPARE(metrics->currentMetric(), QStringLiteral("custom/grad_norm"));  // the first non-fixed one
    QTRY_VERIFY(metrics->loaded());
    QCOMPARE(metrics->chart()->seriesNames().size(), 2);  // r-1 and r-2 (r-3 has no samples)
    metrics->setMetric(loss);
    QTRY_VERIFY(metrics->loaded() && metrics->chart()->seriesNames().size() == 2);

    saveScreenshot(view, "compare_view.png");
    const QString dir = qEnvironmentVariable("RINGSIDE_SCREENSHOT_DIR");
    if (!dir.isEmpty()) {
      QVERIFY(view.exportChartSvg(loss, QDir(dir).filePath("compare_loss.svg")).isOk());
    }
  }

 private:
  std::unique_ptr<ControllerInTempDir> fixture_;
  Controller* controller_ = nullptr;  // fixture_'s
  QList<RunForm> forms_;
};

QTEST_MAIN(HistoryPanelTest)
#include "history_panel_test.moc"
