// The build links jemalloc into every program that simulates (see STRATASIM_ALLOCATOR in the
// top CMakeLists.txt); a link order or flag that silently kept glibc's malloc would make large
// simulations about 2x slower without failing anything else.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

namespace {

TEST(Allocator, ProgramsUseTheConfiguredMalloc) {
  // jemalloc exports mallctl; glibc does not.
  void* mallctl = dlsym(RTLD_DEFAULT, "mallctl");
#ifdef STRATASIM_JEMALLOC
  ASSERT_NE(mallctl, nullptr)
      << "built with STRATASIM_ALLOCATOR=jemalloc but jemalloc is not loaded";
  // And it is the malloc in use, not merely loaded: jemalloc's usable size of a 24-byte
  // request is its 32-byte size class, glibc's is 24.
  using UsableSize = size_t (*)(void*);
  auto usable = reinterpret_cast<UsableSize>(dlsym(RTLD_DEFAULT, "malloc_usable_size"));
  ASSERT_NE(usable, nullptr);
  std::unique_ptr<void, decltype(&std::free)> p(std::malloc(24), &std::free);
  EXPECT_EQ(usable(p.get()), 32u);
#else
  EXPECT_EQ(mallctl, nullptr) << "built with STRATASIM_ALLOCATOR=system but jemalloc is loaded";
#endif
}

}  // namespace
