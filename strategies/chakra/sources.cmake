# A workload read from Chakra execution traces (chakra/, docs/chakra.md).
list(APPEND STRATEGY_SOURCES
  chakra/chakra_strategy.cpp
)
