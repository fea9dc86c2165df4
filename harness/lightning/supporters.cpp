// Mirrors pytorch_lightning/trainer/supporters.py @ 1.5.0.
#include "harness/lightning/supporters.h"

#include <optional>
#include <utility>

#include "harness/data/multi_processing_dataloader_iter.h"
#include "harness/lightning/apply_func.h"

namespace dlreset::lightning {

CombinedLoaderIterator::CombinedLoaderIterator(std::shared_ptr<data::DataLoader> loaders)
    : loaders_(std::move(loaders)) {}

std::shared_ptr<data::BatchIterator>& CombinedLoaderIterator::loader_iters() {
  if (!loader_iters_) loader_iters_ = loaders_->iter();
  return loader_iters_;
}

std::optional<data::Batch> CombinedLoaderIterator::next() { return loader_iters()->next(); }

CombinedLoader::CombinedLoader(std::shared_ptr<data::DataLoader> loaders) : loaders_(std::move(loaders)) {}

std::shared_ptr<data::BatchIterator> CombinedLoader::iter() {
  auto iterator = std::make_shared<CombinedLoaderIterator>(loaders_);
  iterator_ = iterator;
  return iterator;
}

void CombinedLoader::shutdown_workers_and_reset_iterator(data::DataLoader& dataloader) {
  if (auto* iterator = dynamic_cast<data::MultiProcessingDataLoaderIter*>(dataloader.iterator().get().get())) {
    iterator->shutdown_workers();
  }
  dataloader.iterator() = nullptr;
}

void CombinedLoader::reset() {
  if (iterator_) iterator_->drop_loader_iters();
  if (loaders_) apply_to_collection(*loaders_, &CombinedLoader::shutdown_workers_and_reset_iterator);
  iterator_ = nullptr;
}

}  // namespace dlreset::lightning
