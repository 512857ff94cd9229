# Data parallelism beyond bulk-synchronous (issue #23): parameter server (BSP and SSP), DC-S3GD.
list(APPEND STRATEGY_SOURCES
  async/dc_s3gd.cpp
  async/parameter_server.cpp
  async/staleness.cpp
  async/worker_passes.cpp
)
list(APPEND STRATEGY_TESTS
  async/async_test.cpp
)
