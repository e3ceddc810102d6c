//===- ExchangeCopies.h - A dt.exchange as copies and messages -*- C++ -*-===//
//
// What one rank does in a dt.exchange, given its routes (Context.h): its
// own parts copied from its input to its output, and for each other member
// one message each way -- the parts packed back to back into a staging
// buffer (unpacked from one), or straight from (into) the tensor when they
// are one contiguous run of it. Every copy is a block of rows (Boxes.h).
// The MPI backend runs the copies with memcpy, the NCCL backend as
// cuMemcpy2D. Pure arithmetic: test/Unit runs random plans with memcpy and
// checks every rank's piece of the target layout.
//
//===----------------------------------------------------------------------===//

#ifndef DT_RUNTIME_LIB_EXCHANGECOPIES_H
#define DT_RUNTIME_LIB_EXCHANGECOPIES_H

#include "Boxes.h"
#include "Context.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dt::rt {

/// A box of `box` elements per dim from `srcOffset` of a row-major tensor
/// shaped `srcShape` to `dstOffset` of one shaped `dstShape`: one copy per
/// block of rows (Boxes.h). Empty for an empty box.
inline std::vector<Copy2D> boxCopies(const std::vector<int64_t> &srcShape,
                                     const std::vector<int64_t> &srcOffset,
                                     const std::vector<int64_t> &dstShape,
                                     const std::vector<int64_t> &dstOffset,
                                     const std::vector<int64_t> &box,
                                     size_t elementSize) {
  std::vector<Copy2D> copies;
  forEachRowBlock(srcShape, srcOffset, dstShape, dstOffset, box, elementSize,
                  [&](const Copy2D &block) { copies.push_back(block); });
  return copies;
}

/// What one rank sends to (or receives from) one other member in a
/// dt.exchange: `bytes` at `offset` of the staging buffer, packed there from
/// the input (unpacked from there to the output) by `copies` -- or, when
/// the member's parts are one contiguous run of the tensor, straight from
/// (into) the tensor at `offset`, with no copies.
struct ExchangeTransfer {
  int64_t member = 0;
  size_t bytes = 0, offset = 0;
  bool inPlace = false;
  std::vector<Copy2D> copies;
};

/// One rank's dt.exchange as copies around its sends and receives: its own parts copied from the input to the output, the parts
/// for each other member packed back to back in the order of the routes
/// (both sides list a pair's parts alike), and those received unpacked.
struct ExchangeCopies {
  std::vector<Copy2D> own;
  std::vector<ExchangeTransfer> sends, receives;
  size_t sendStaging = 0, receiveStaging = 0; ///< Bytes of staging needed.
};

/// `self`: this rank's index in the group.
inline ExchangeCopies planExchangeCopies(const ExchangeRoutes &routes,
                                         int64_t self, size_t elementSize) {
  ExchangeCopies plan;
  // `sending`: the parts leave the input; otherwise they arrive in the
  // output. Parts of one member are adjacent in the routes (by peer); the
  // rank's own parts are among its receives (as parts from itself).
  auto transfers = [&](const std::vector<ExchangeCopy> &parts, bool sending,
                       std::vector<ExchangeTransfer> &out, size_t &staging) {
    const std::vector<int64_t> &tensor =
        sending ? routes.inShape : routes.outShape;
    for (size_t first = 0; first < parts.size();) {
      size_t end = first;
      while (end < parts.size() && parts[end].member == parts[first].member)
        ++end;
      ExchangeTransfer t;
      t.member = parts[first].member;
      if (t.member == self) {
        for (size_t i = first; i < end; ++i) {
          std::vector<Copy2D> c =
              boxCopies(routes.inShape, parts[i].from, routes.outShape,
                        parts[i].to, parts[i].shape, elementSize);
          plan.own.insert(plan.own.end(), c.begin(), c.end());
        }
        first = end;
        continue;
      }
      t.offset = staging;
      for (size_t i = first; i < end; ++i) {
        const ExchangeCopy &part = parts[i];
        std::vector<int64_t> zero(part.shape.size(), 0);
        std::vector<Copy2D> c =
            sending ? boxCopies(tensor, part.from, part.shape, zero, part.shape,
                                elementSize)
                    : boxCopies(part.shape, zero, tensor, part.to, part.shape,
                                elementSize);
        for (Copy2D &copy : c)
          (sending ? copy.dstOffset : copy.srcOffset) += staging + t.bytes;
        t.copies.insert(t.copies.end(), c.begin(), c.end());
        t.bytes += part.count() * elementSize;
      }
      // One contiguous run of the tensor needs no staging.
      if (t.copies.size() == 1) {
        const Copy2D &c = t.copies.front();
        size_t pitch = sending ? c.srcPitch : c.dstPitch;
        if (c.height == 1 || pitch == c.width) {
          t.inPlace = true;
          t.offset = sending ? c.srcOffset : c.dstOffset;
          t.copies.clear();
        }
      }
      if (!t.inPlace)
        staging += t.bytes;
      if (t.bytes > 0)
        out.push_back(std::move(t));
      first = end;
    }
  };
  transfers(routes.sends, true, plan.sends, plan.sendStaging);
  transfers(routes.receives, false, plan.receives, plan.receiveStaging);
  return plan;
}

} // namespace dt::rt

#endif // DT_RUNTIME_LIB_EXCHANGECOPIES_H
