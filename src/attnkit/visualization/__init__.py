"""Pictures of attention: heatmaps, layer x head grids, HAN text highlighting."""
