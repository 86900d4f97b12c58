#include "tests/sync/editor.h"

#include <iterator>

#include "sync/random.h"

namespace aweft::sync::testing {

Value Editor::Primitive() {
  switch (Pick(6)) {
    case 0:
      return std::monostate{};
    case 1:
      return Pick(2) == 0;
    case 2:
      return static_cast<double>(Pick(1000)) - 500;
    case 3:
      return 0.5 + static_cast<double>(Pick(100));
    case 4:
      return std::string("t") + std::to_string(Pick(50));
    default:
      return codec::Bytes{std::string(Pick(4), '\x07')};
  }
}

Observable& Editor::AnyObservable(Document& document) {
  auto it = document.index().begin();
  std::advance(it, Pick(document.index().size()));
  return *it->second;
}

Edit Editor::RandomEdit(Document& document) {
  Edit edit;
  Observable& target = AnyObservable(document);
  auto write = [&](Observable& node, std::string key, std::optional<Value> value) {
    edit.push_back({node.id(), key, value, std::nullopt});
    return document.WriteSlot(node, key, std::move(value));
  };
  // The value to write: mostly primitives, sometimes a new observable with
  // a slot of its own, an alias, or (a move) an observable already attached.
  std::optional<SlotWrite> move_from;
  auto value = [&]() -> Value {
    const size_t roll = Pick(10);
    if (roll < 6) return Primitive();
    if (roll < 8) {
      const Kind kind = static_cast<Kind>(Pick(3));
      Observable& child = document.Create(kind);
      edit.push_back({child.id(), "", std::nullopt, kind});
      std::string key = kind == Kind::kObject  ? "k"
                        : kind == Kind::kArray ? std::string("\x01\x81\x01\x01\x01", 5)
                                               : std::string(child.id().view());
      edit.push_back({child.id(), key, Primitive(), std::nullopt});
      (void)document.WriteSlot(child, key, edit.back().value);
      return Attach(child);
    }
    Observable& other = AnyObservable(document);
    if (roll == 8 || &other == &document.root() || !other.parent()) return Alias(other);
    move_from = SlotWrite{other.parent()->id(), other.parent_key(), std::nullopt, {}};
    return Attach(other);
  };
  std::string key;
  std::optional<Value> written;
  const size_t action = Pick(4);
  switch (target.kind()) {
    case Kind::kObject:
      key = std::string(1, static_cast<char>('a' + Pick(5)));
      break;
    case Kind::kArray: {
      const size_t n = target.size();
      if (action == 0 || n == 0) {  // Insert at a fresh position.
        const size_t at = Pick(n + 1);
        Observable* array = &target;
        auto done = document.Atomic([&]() -> Result<void> {
          Value v = value();
          if (auto r = document.Insert(*array, at, v); !r) return r;
          // The position Insert chose is the one at `at` now.
          edit.push_back({array->id(), array->PositionAt(at), v, std::nullopt});
          if (move_from)
            return write(*document.Find(move_from->target), move_from->key, std::nullopt);
          return {};
        });
        if (!done) edit.clear();
        return edit;
      }
      key = target.PositionAt(Pick(n));
      break;
    }
    case Kind::kMap: {
      static const std::vector<Id> keys = [] {
        std::vector<Id> ids;
        for (int i = 0; i < 4; ++i) ids.push_back(MintId());
        return ids;
      }();
      key = std::string(keys[Pick(keys.size())].view());
      break;
    }
  }
  auto done = document.Atomic([&]() -> Result<void> {
    if (action == 1 && target.Get(key)) return write(target, key, std::nullopt);
    if (auto r = write(target, key, value()); !r) return r;
    if (move_from) return write(*document.Find(move_from->target), move_from->key, std::nullopt);
    return {};
  });
  if (!done) edit.clear();
  return edit;
}

Result<void> Editor::Replay(Document& document, const Edit& edit) {
  return document.Atomic([&]() -> Result<void> {
    for (const SlotWrite& w : edit) {
      if (w.create) {
        document.Create(*w.create, w.target);
        continue;
      }
      Observable* node = document.Find(w.target);
      if (!node) {
        return codec::Refusal{codec::Reason::kNotObservable, "replay target missing"};
      }
      if (auto r = document.WriteSlot(*node, w.key, w.value); !r) return r;
    }
    return {};
  });
}

}  // namespace aweft::sync::testing
