# The search space, its pruning and memory model (search/space.h) and the `search:` section
# (search/search_spec.h).
list(APPEND SEARCH_SOURCES space.cpp space_memory.cpp search_spec.cpp)
list(APPEND SEARCH_TESTS space_test.cpp search_spec_test.cpp)
