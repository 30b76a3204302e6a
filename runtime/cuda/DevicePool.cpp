//===- DevicePool.cpp - first-fit blocks of one device allocation ---------===//

#include "runtime/cuda/DevicePool.h"

#include <iterator>

namespace tfc::rt::cuda {

void DevicePool::reset(uintptr_t base, size_t bytes) {
  base_ = base;
  bytes_ = bytes / kAlignment * kAlignment;
  inUse_ = 0;
  free_.clear();
  used_.clear();
  if (bytes_)
    free_[0] = bytes_;
}

std::optional<uintptr_t> DevicePool::take(size_t bytes) {
  const size_t size = rounded(bytes);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size)
      continue;
    const size_t offset = it->first, left = it->second - size;
    free_.erase(it);
    if (left)
      free_[offset + size] = left;
    used_[offset] = size;
    inUse_ += size;
    return base_ + offset;
  }
  return std::nullopt;
}

bool DevicePool::give(uintptr_t address) {
  if (!contains(address))
    return false;
  auto used = used_.find(size_t(address - base_));
  if (used == used_.end())
    return false;
  size_t offset = used->first, size = used->second;
  used_.erase(used);
  inUse_ -= size;
  // Merge with the free block after, then the one before.
  if (auto next = free_.find(offset + size); next != free_.end()) {
    size += next->second;
    free_.erase(next);
  }
  auto after = free_.lower_bound(offset);
  if (after != free_.begin()) {
    auto before = std::prev(after);
    if (before->first + before->second == offset) {
      before->second += size;
      return true;
    }
  }
  free_[offset] = size;
  return true;
}

} // namespace tfc::rt::cuda
