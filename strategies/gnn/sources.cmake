# Sampled GNN training and its feature transfer: no cache, PaGraph's static cache, BRGraph.
list(APPEND STRATEGY_SOURCES
  gnn/batch_cache.cpp
  gnn/feature_source.cpp
  gnn/gnn_training.cpp
)
list(APPEND STRATEGY_TESTS
  gnn/feature_source_test.cpp
  gnn/gnn_training_test.cpp
)
