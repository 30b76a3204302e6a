//===- AttentionSvg.h - attention maps drawn as a standalone SVG ----------===//
//
//   MODEL attention --checkpoint F --input ... --svg OUT.svg
//
// draws the attention maps of one example as the UvA Transformers tutorial's
// plot_attention_maps does with matplotlib: a grid of heat maps, layers by
// rows and heads by columns, each titled "Layer l, Head h" (1-based), drawn
// like imshow(map, origin='lower', vmin=0) -- the first query at the bottom,
// the viridis colormap scaled from 0 to the map's own maximum -- with the
// input tokens as the tick labels of both axes. Each map also gets its own
// colour bar, and each cell a <title> (a hover tooltip) with its exact
// weight. The output depends only on the arguments (no locale, no clock).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_ATTENTIONSVG_H
#define TFC_RUNTIME_ATTENTIONSVG_H

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

/// One head's map: rows = queries, cols = keys, row-major weights (each row
/// sums to ~1).
struct AttentionGrid {
  int64_t rows = 0, cols = 0;
  std::vector<float> weights;
};

/// layers[l][h] is layer l's head h; every layer has the same number of heads
/// and every map the same shape. rowLabels/colLabels: the tick labels (the
/// input tokens), rows/cols long, or empty for the indices 0, 1, ... (as the
/// tutorial's np.arange). Labels are UTF-8; they, and the title, are escaped
/// for XML (invalid UTF-8 and control characters are replaced, not dropped).
/// Returns a complete standalone SVG document.
///
/// Throws std::invalid_argument when there is no map, when the layers' head
/// counts differ, when a map's shape is not positive or differs from the
/// first's, when a map's weights are not rows*cols long, or when a non-empty
/// label list is not rows (cols) long.
///
/// Weights are coloured as matplotlib does: 0 and below the darkest colour
/// (#440154), the map's largest finite weight the brightest (#fde725), NaN
/// left unpainted.
std::string renderAttentionSvg(const std::vector<std::vector<AttentionGrid>> &layers,
                               const std::vector<std::string> &rowLabels,
                               const std::vector<std::string> &colLabels,
                               const std::string &title);

/// viridis(t) for t in [0, 1] (clamped) as "#rrggbb", quantised to 256
/// levels as a matplotlib colormap is: viridisHex(1) == "#fde725",
/// viridisHex(0) == "#440154".
std::string viridisHex(double t);

} // namespace tfc::rt

#endif // TFC_RUNTIME_ATTENTIONSVG_H
