// MetricChart's export: PNG (a grab of the view), SVG (the chart's scene painted into
// QSvgGenerator), and the save dialogs behind the context menu.
#include <QBuffer>
#include <QChart>
#include <QDir>
#include <QFileDialog>
#include <QGraphicsScene>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QSaveFile>
#include <QSvgGenerator>

#include "metric_chart_parts.h"
#include "ringside/gui/dialog_folder.h"
#include "ringside/gui/export_files.h"

namespace ringside::gui {

void MetricChart::setExportName(const QString& baseName) { exportName_ = baseName; }

QString MetricChart::exportName() const {
  return exportName_.isEmpty() ? fileSafeName(title()) : exportName_;
}

Status MetricChart::exportPng(const QString& path) {
  replotNow();
  const QPixmap pixmap = view_->grab();
  if (pixmap.isNull() || !pixmap.save(path, "PNG")) {
    return Status::ioError(
        tr("Could not write the PNG file %1: check the folder exists and is writable.")
            .arg(path)
            .toStdString());
  }
  return Status::ok();
}

Status MetricChart::exportSvg(const QString& path) {
  replotNow();
  const QRectF source = chart_->mapRectToScene(chart_->rect());
  const QSize size = source.size().toSize();
  QBuffer svg;
  svg.open(QIODevice::WriteOnly);
  {
    QSvgGenerator generator;
    generator.setOutputDevice(&svg);
    generator.setSize(size);
    generator.setViewBox(QRect(QPoint(0, 0), size));
    generator.setTitle(chart_->title());
    generator.setDescription(tr("Chart exported by Ringside"));
    QPainter painter(&generator);
    // QSvgGenerator writes no clip paths (Qt 6.4): the series are cut to the plot area by
    // geometry while they are painted into it.
    cutToPlot_ = true;
    chart_->scene()->render(&painter, QRectF(QPointF(0, 0), size), source);
    cutToPlot_ = false;
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(svg.data()) != svg.data().size() ||
      !file.commit()) {
    return Status::ioError(
        tr("Could not write the SVG file %1: %2").arg(path, file.errorString()).toStdString());
  }
  return Status::ok();
}

void MetricChart::askExportPng() { askExport(false); }
void MetricChart::askExportSvg() { askExport(true); }

void MetricChart::askExport(bool svg) {
  const QString suggested = QDir(dialogFolder(kExportDialog)).filePath(
      exportName() + (svg ? QStringLiteral(".svg") : QStringLiteral(".png")));
  const QString path = QFileDialog::getSaveFileName(
      this, svg ? tr("Save chart as SVG") : tr("Save chart as PNG"), suggested,
      svg ? tr("SVG images (*.svg)") : tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  rememberDialogFolder(kExportDialog, path);
  const Status status = svg ? exportSvg(path) : exportPng(path);
  if (!status.isOk()) {
    QMessageBox::warning(this, tr("Export failed"), QString::fromStdString(status.message()));
  }
}

}  // namespace ringside::gui
