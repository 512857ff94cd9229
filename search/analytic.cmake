# The analytic estimate of a candidate (search/analytic.h).
list(APPEND SEARCH_SOURCES analytic.cpp)
list(APPEND SEARCH_TESTS analytic_test.cpp)
