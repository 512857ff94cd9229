# Data parallelism with compressed gradients: S2Reducer, CASQ and their baselines.
list(APPEND STRATEGY_SOURCES
  comm/codec_work.cpp
  comm/compressed_ddp.cpp
  comm/compression_options.cpp
  comm/embedding_rows.cpp
)
list(APPEND STRATEGY_TESTS
  comm/codec_work_test.cpp
  comm/compressed_ddp_test.cpp
  comm/embedding_rows_test.cpp
  comm/compression_options_test.cpp
)
