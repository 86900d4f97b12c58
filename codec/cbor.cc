#include "codec/cbor.h"

#include <bit>
#include <cassert>
#include <cmath>

namespace aweft::codec {
namespace {

constexpr double kMaxSafeDouble = 9007199254740992.0;  // 2^53

constexpr uint8_t kFalse = 0xf4;
constexpr uint8_t kTrue = 0xf5;
constexpr uint8_t kNull = 0xf6;
constexpr uint8_t kFloat64 = 0xfb;

// True for a double the integer encoding must carry: whole and within ±2^53.
// Negative zero is whole, so it is one of them.
bool IntegerValued(double value) {
  return std::trunc(value) == value && std::fabs(value) <= kMaxSafeDouble;
}

enum class Utf8 { kValid, kSurrogate, kInvalid };

bool Continuation(uint8_t byte) { return (byte & 0xc0) == 0x80; }

// Checks one multi-byte sequence starting at text[i], whose lead byte is
// `lead` (>= 0x80), against Unicode's Table 3-7 of well-formed sequences: no
// overlong forms, nothing past U+10FFFF. Sets `length` on success.
Utf8 Sequence(std::string_view text, size_t i, uint8_t lead, size_t& length) {
  uint8_t low = 0x80;  // The range the second byte must fall in.
  uint8_t high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;  // Above it lie the encoded surrogates.
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return Utf8::kInvalid;
  }
  if (text.size() - i < length) return Utf8::kInvalid;
  const auto second = static_cast<uint8_t>(text[i + 1]);
  for (size_t k = 2; k < length; ++k) {
    if (!Continuation(static_cast<uint8_t>(text[i + k]))) return Utf8::kInvalid;
  }
  if (second >= low && second <= high) return Utf8::kValid;
  // ED A0..BF xx is U+D800..U+DFFF written as if it were a character.
  if (lead == 0xed && second >= 0xa0 && second <= 0xbf) return Utf8::kSurrogate;
  return Utf8::kInvalid;
}

// Checks `text` as strict UTF-8; on failure `offset` is where the first bad
// sequence starts.
Utf8 CheckUtf8(std::string_view text, size_t& offset) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<uint8_t>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    const Utf8 verdict = Sequence(text, i, lead, length);
    if (verdict != Utf8::kValid) {
      offset = i;
      return verdict;
    }
    i += length;
  }
  return Utf8::kValid;
}

Refusal Fail(Reason reason, size_t offset, std::string_view what) {
  return Refusal{reason, std::string(what) + " at offset " + std::to_string(offset)};
}

// Checks one item at a time, keeping open arrays as a fixed stack of the
// items each still owes: no recursion, no allocation.
class Scanner {
 public:
  explicit Scanner(std::string_view bytes) : bytes_(bytes) {}

  Result<void> Run() {
    do {
      if (auto item = Item(); !item) return item;
    } while (depth_ > 0);
    if (pos_ != bytes_.size()) {
      return Fail(Reason::kTrailingBytes, pos_, "bytes follow the item");
    }
    return {};
  }

 private:
  uint8_t Byte(size_t at) const { return static_cast<uint8_t>(bytes_[at]); }
  size_t Left() const { return bytes_.size() - pos_; }

  // Checks the next item's head and payload. An array with items is pushed
  // rather than completed; anything else completes, and so may the arrays
  // it was the last item of.
  Result<void> Item() {
    if (Left() == 0) {
      return Fail(Reason::kTruncated, pos_, "the bytes end before an item");
    }
    const size_t start = pos_++;
    const uint8_t major = Byte(start) >> 5;
    const uint8_t info = Byte(start) & 0x1f;
    if (major == 5 || major == 6) {
      return Fail(Reason::kUnsupportedMajor, start, major == 5 ? "a map" : "a tagged item");
    }
    if (major == 7) {
      if (auto simple = Simple(start); !simple) return simple;
    } else {
      if (major == 4 && depth_ == kMaxNesting) {
        return Fail(Reason::kNestingTooDeep, start, "a ninth nested array starts");
      }
      uint64_t argument = 0;
      if (auto head = Head(start, info, argument); !head) return head;
      if (auto payload = Payload(start, major, argument); !payload) {
        return payload;
      }
      if (major == 4 && argument > 0) {
        owed_[depth_++] = argument;
        return {};
      }
    }
    while (depth_ > 0 && --owed_[depth_ - 1] == 0) --depth_;
    return {};
  }

  // Reads the argument of the head at `start`, held in `info` and the bytes
  // after it, refusing any head the encoder would not write.
  Result<void> Head(size_t start, uint8_t info, uint64_t& argument) {
    if (info < 24) {
      argument = info;
      return {};
    }
    if (info == 31) {
      return Fail(Reason::kIndefiniteLength, start, "an indefinite length");
    }
    if (info > 27) {
      return Fail(Reason::kMalformedHead, start,
                  "reserved additional information " + std::to_string(info));
    }
    const size_t width = size_t{1} << (info - 24);  // 1, 2, 4 or 8 bytes.
    if (Left() < width) {
      return Fail(Reason::kTruncated, start, "a head is cut short");
    }
    argument = 0;
    for (size_t i = 0; i < width; ++i) argument = argument << 8 | Byte(pos_++);
    if (argument > kMaxSafeInteger) {
      return Fail(Reason::kIntegerOutOfRange, start, "an argument above 2^53");
    }
    const uint64_t smallest = width == 1 ? 24 : uint64_t{1} << (4 * width);
    if (argument < smallest) {
      return Fail(Reason::kNonCanonicalInteger, start, "a head wider than its argument needs");
    }
    return {};
  }

  // Checks what follows a head of majors 0 to 4.
  Result<void> Payload(size_t start, uint8_t major, uint64_t argument) {
    if (major == 1 && argument >= kMaxSafeInteger) {
      return Fail(Reason::kIntegerOutOfRange, start, "an integer below -2^53");
    }
    if (major == 2 || major == 3) {
      if (argument > Left()) {
        return Fail(Reason::kTruncated, start, "a string is cut short");
      }
      const std::string_view text = bytes_.substr(pos_, argument);
      size_t offset = 0;
      if (major == 3 && CheckUtf8(text, offset) != Utf8::kValid) {
        return Fail(Reason::kInvalidUtf8, pos_ + offset, "text is not UTF-8");
      }
      pos_ += argument;
    }
    // Every item takes at least one byte, so a count beyond the bytes left
    // is refused before anything is spent on it.
    if (major == 4 && argument > Left()) {
      return Fail(
          Reason::kTruncated, start,
          "an array of " + std::to_string(argument) + " items cannot fit in the bytes left");
    }
    return {};
  }

  // Checks a major 7 item: false, true, null or a float64.
  Result<void> Simple(size_t start) {
    const uint8_t initial = Byte(start);
    if (initial == kFalse || initial == kTrue || initial == kNull) return {};
    if (initial != kFloat64) {
      return Fail(Reason::kUnsupportedSimple, start,
                  "simple value " + std::to_string(initial & 0x1f));
    }
    if (Left() < 8) {
      return Fail(Reason::kTruncated, start, "a float64 is cut short");
    }
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = bits << 8 | Byte(pos_++);
    const double value = std::bit_cast<double>(bits);
    if (!std::isfinite(value)) {
      return Fail(Reason::kNonFiniteFloat, start, "NaN or an infinity");
    }
    if (IntegerValued(value)) {
      return Fail(Reason::kNonCanonicalFloat, start,
                  "a float64 holding a whole number within 2^53");
    }
    return {};
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  int depth_ = 0;                 // Arrays open around the next item.
  uint64_t owed_[kMaxNesting]{};  // Items each open array still owes.
};

}  // namespace

Result<void> Scan(std::string_view bytes) { return Scanner(bytes).Run(); }

Result<void> CheckText(std::string_view text) {
  size_t offset = 0;
  switch (CheckUtf8(text, offset)) {
    case Utf8::kValid:
      return {};
    case Utf8::kSurrogate:
      return Fail(Reason::kLoneSurrogate, offset, "text holds a surrogate");
    case Utf8::kInvalid:
      break;
  }
  return Fail(Reason::kInvalidUtf8, offset, "text is not UTF-8");
}

// --- Reader ----------------------------------------------------------------

uint64_t Reader::Argument(size_t& length) const {
  const uint8_t info = static_cast<uint8_t>(in_[0]) & 0x1f;
  if (info < 24) {
    length = 1;
    return info;
  }
  const size_t width = size_t{1} << (info - 24);
  length = 1 + width;
  uint64_t argument = 0;
  for (size_t i = 1; i <= width; ++i) {
    argument = argument << 8 | static_cast<uint8_t>(in_[i]);
  }
  return argument;
}

Reader::Type Reader::Peek() const {
  assert(!done());
  const auto initial = static_cast<uint8_t>(in_[0]);
  switch (initial >> 5) {
    case 0:
      return Type::kUint;
    case 1:
      return Type::kNegative;
    case 2:
      return Type::kBytes;
    case 3:
      return Type::kText;
    case 4:
      return Type::kArray;
  }
  if (initial == kFalse) return Type::kFalse;
  if (initial == kTrue) return Type::kTrue;
  if (initial == kNull) return Type::kNull;
  return Type::kFloat;  // The only other item Scan() lets through.
}

bool Reader::ReadUint(uint64_t& out) {
  if (done() || Peek() != Type::kUint) return false;
  size_t length = 0;
  out = Argument(length);
  in_.remove_prefix(length);
  return true;
}

bool Reader::ReadInt(int64_t& out) {
  if (done()) return false;
  const Type type = Peek();
  if (type != Type::kUint && type != Type::kNegative) return false;
  size_t length = 0;
  const auto argument = static_cast<int64_t>(Argument(length));
  out = type == Type::kUint ? argument : -1 - argument;
  in_.remove_prefix(length);
  return true;
}

bool Reader::ReadNumber(double& out) {
  if (done()) return false;
  if (Peek() == Type::kFloat) {
    uint64_t bits = 0;
    for (size_t i = 1; i <= 8; ++i) {
      bits = bits << 8 | static_cast<uint8_t>(in_[i]);
    }
    out = std::bit_cast<double>(bits);
    in_.remove_prefix(9);
    return true;
  }
  int64_t value = 0;
  if (!ReadInt(value)) return false;
  out = static_cast<double>(value);  // Exact: Scan() kept it within ±2^53.
  return true;
}

bool Reader::ReadText(std::string_view& out) {
  if (done() || Peek() != Type::kText) return false;
  size_t length = 0;
  const uint64_t size = Argument(length);
  out = in_.substr(length, size);
  in_.remove_prefix(length + size);
  return true;
}

bool Reader::ReadBytes(std::string_view& out) {
  if (done() || Peek() != Type::kBytes) return false;
  size_t length = 0;
  const uint64_t size = Argument(length);
  out = in_.substr(length, size);
  in_.remove_prefix(length + size);
  return true;
}

bool Reader::ReadBool(bool& out) {
  if (done()) return false;
  const Type type = Peek();
  if (type != Type::kFalse && type != Type::kTrue) return false;
  out = type == Type::kTrue;
  in_.remove_prefix(1);
  return true;
}

bool Reader::ReadNull() {
  if (done() || Peek() != Type::kNull) return false;
  in_.remove_prefix(1);
  return true;
}

bool Reader::ReadArray(uint64_t& count) {
  if (done() || Peek() != Type::kArray) return false;
  size_t length = 0;
  count = Argument(length);
  in_.remove_prefix(length);
  return true;
}

void Reader::Skip() {
  uint64_t owed = 1;  // Items still to skip; an array adds its own.
  while (owed > 0 && !done()) {
    --owed;
    size_t length = 0;
    switch (Peek()) {
      case Type::kFalse:
      case Type::kTrue:
      case Type::kNull:
        length = 1;
        break;
      case Type::kFloat:
        length = 9;
        break;
      case Type::kArray:
        owed += Argument(length);
        break;
      case Type::kBytes:
      case Type::kText:
        length += Argument(length);
        break;
      case Type::kUint:
      case Type::kNegative:
        Argument(length);
        break;
    }
    in_.remove_prefix(length);
  }
}

std::string_view Reader::NextItem() const {
  Reader rest = *this;
  rest.Skip();
  return in_.substr(0, in_.size() - rest.in_.size());
}

// --- Writer ----------------------------------------------------------------

void Writer::Head(uint8_t major, uint64_t argument) {
  const auto type = static_cast<uint8_t>(major << 5);
  if (argument < 24) {
    out_.push_back(static_cast<char>(type | argument));
    return;
  }
  // The shortest of 1, 2, 4 or 8 argument bytes (additional info 24 to 27).
  int width = 8;
  if (argument <= 0xff) {
    width = 1;
  } else if (argument <= 0xffff) {
    width = 2;
  } else if (argument <= 0xffffffff) {
    width = 4;
  }
  const int info = 24 + std::countr_zero(static_cast<unsigned>(width));
  out_.push_back(static_cast<char>(type | info));
  for (int shift = 8 * (width - 1); shift >= 0; shift -= 8) {
    out_.push_back(static_cast<char>(argument >> shift));
  }
}

void Writer::Number(double value) {
  assert(std::isfinite(value));
  if (IntegerValued(value)) {
    // Negative zero lands here and is written as 0: the model has one zero.
    if (value >= 0) {
      Head(0, static_cast<uint64_t>(value));
    } else {
      Head(1, static_cast<uint64_t>(-value) - 1);
    }
    return;
  }
  const auto bits = std::bit_cast<uint64_t>(value);
  out_.push_back(static_cast<char>(kFloat64));
  for (int shift = 56; shift >= 0; shift -= 8) {
    out_.push_back(static_cast<char>(bits >> shift));
  }
}

void Writer::Text(std::string_view text) {
  Head(3, text.size());
  out_.append(text);
}

void Writer::Bytes(std::string_view bytes) {
  Head(2, bytes.size());
  out_.append(bytes);
}

}  // namespace aweft::codec
