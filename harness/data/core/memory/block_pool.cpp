#include "harness/data/core/memory/block_pool.h"

#include <cstdint>
#include <new>

namespace dlreset::data::detail {

/// What lies before each block: the loan, once the block is lent, and the pool it keeps alive.
struct BlockPool::Header {
  BlockLoan loan;
  bool lent = false;
  std::shared_ptr<BlockPool> keep;  ///< Set while lent.
};
BlockPool::Header& BlockPool::header_of(void* block) noexcept {
  static_assert(sizeof(Header) <= kHeaderBytes, "a block's header must fit before it");
  return *reinterpret_cast<Header*>(static_cast<std::uint8_t*>(block) - kHeaderBytes);
}

void BlockPool::free_block(void* block, std::size_t bytes) noexcept {
  Header& header = header_of(block);
  header.~Header();
  ::operator delete(&header, bytes + kHeaderBytes);
}

BlockPool::BlockPool(BlockPoolLimits limits) : limits_(limits) { kept_.reserve(limits_.blocks); }

BlockPool::~BlockPool() {
  for (const auto& [bytes, block] : kept_) free_block(block, bytes);
}

void* BlockPool::allocate(std::size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->first == bytes) {
        void* block = it->second;
        kept_bytes_ -= it->first;
        kept_.erase(it);
        ++reuses_;
        return block;
      }
    }
    ++fresh_allocations_;
  }
  void* memory = ::operator new(bytes + kHeaderBytes);
  ::new (memory) Header();
  return static_cast<std::uint8_t*>(memory) + kHeaderBytes;
}

void BlockPool::deallocate(void* block, std::size_t bytes) noexcept {
  if (header_of(block).lent) return;  // the tensor it was lent to gives it back
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept_.size() < limits_.blocks && bytes <= limits_.bytes - kept_bytes_) {
      kept_.emplace_back(bytes, block);
      kept_bytes_ += bytes;
      return;
    }
  }
  free_block(block, bytes);
}

BlockLoan* BlockPool::lend(void* block, std::size_t bytes) noexcept {
  std::shared_ptr<BlockPool> self = weak_from_this().lock();
  Header& header = header_of(block);
  if (!self || header.lent) return nullptr;
  header.loan = BlockLoan{this, block, bytes};
  header.lent = true;
  header.keep = std::move(self);
  return &header.loan;
}

void BlockPool::give_back(BlockLoan& loan) noexcept {
  Header& header = header_of(loan.block);
  // Taken out first: dropping the last owner destroys this pool, after the block is back.
  const std::shared_ptr<BlockPool> keep = std::move(header.keep);
  header.lent = false;
  deallocate(loan.block, loan.bytes);
}

std::int64_t BlockPool::fresh_allocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fresh_allocations_;
}

std::int64_t BlockPool::reuses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reuses_;
}

std::size_t BlockPool::kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_.size();
}

std::size_t BlockPool::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_bytes_;
}

}  // namespace dlreset::data::detail
