//===- DevicePoolTest.cpp - blocks of one device allocation ---------------===//

#include "runtime/cuda/DevicePool.h"

#include <gtest/gtest.h>

using tfc::rt::cuda::DevicePool;

TEST(DevicePool, TakesAlignedBlocksFirstFitAndMergesWhatIsGivenBack) {
  DevicePool pool;
  pool.reset(0x10000, 4096 + 100); // a tail shorter than the alignment is not used
  EXPECT_EQ(pool.bytes(), 4096u);
  auto a = pool.take(1), b = pool.take(300), c = pool.take(256);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, 0x10000u);
  EXPECT_EQ(*b, 0x10000u + 256); // a took one 256-byte block
  EXPECT_EQ(*c, 0x10000u + 256 + 512);
  EXPECT_EQ(pool.inUse(), 256u + 512 + 256);
  EXPECT_TRUE(pool.contains(*b + 10));
  EXPECT_FALSE(pool.contains(0x10000 + 4096));

  // Too big for what is left (4096 - 1024 = 3072).
  EXPECT_FALSE(pool.take(3073));
  // b given back: a 512-byte hole, taken first by a block that fits it.
  EXPECT_TRUE(pool.give(*b));
  EXPECT_FALSE(pool.give(*b)) << "given back twice";
  EXPECT_FALSE(pool.give(*a + 8)) << "not the start of a block";
  auto d = pool.take(400);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, *b);
  // Everything given back merges into one block again: the whole pool fits.
  for (auto block : {a, c, d})
    EXPECT_TRUE(pool.give(*block));
  EXPECT_EQ(pool.inUse(), 0u);
  auto whole = pool.take(4096);
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole, 0x10000u);
  EXPECT_FALSE(pool.take(1));
}

TEST(DevicePool, AnEmptyPoolHasNothing) {
  DevicePool pool;
  EXPECT_FALSE(pool.take(1));
  EXPECT_FALSE(pool.contains(0));
  EXPECT_FALSE(pool.give(0));
}
