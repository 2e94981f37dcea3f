// libbpf log capture: one global print callback writing into a thread_local capture.
#include "log.h"

#include <bpf/libbpf.h>

#include <cstdio>
#include <mutex>

namespace blkheat {
namespace {

// A verifier log can reach megabytes; keep the tail (where the verdict is) within this bound.
constexpr size_t kMaxCaptureBytes = 1 << 20;

thread_local LogCapture* tlCapture = nullptr;

int PrintCallback(enum libbpf_print_level level, const char* format, va_list args) {
  LogCapture* capture = tlCapture;
  if (capture == nullptr || static_cast<int>(level) > capture->captureLevel()) return 0;
  capture->Append(static_cast<int>(level), format, args);
  return 0;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

LogCapture::LogCapture(int captureLevel) : captureLevel_(captureLevel < LIBBPF_WARN ? LIBBPF_WARN : captureLevel) {}

void LogCapture::Append(int level, const char* format, va_list args) {
  char small[1024];
  va_list copy;
  va_copy(copy, args);
  int needed = vsnprintf(small, sizeof(small), format, copy);
  va_end(copy);
  if (needed < 0) return;
  std::string text;
  if (static_cast<size_t>(needed) < sizeof(small)) {
    text.assign(small, static_cast<size_t>(needed));
  } else {
    text.resize(static_cast<size_t>(needed) + 1);
    vsnprintf(&text[0], text.size(), format, args);
    text.resize(static_cast<size_t>(needed));
  }
  if (!partial_.empty() && partialLevel_ != level) Flush();
  partialLevel_ = level;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    partial_.append(text, start, nl - start);
    Flush();
    start = nl + 1;
  }
  partial_.append(text, start, std::string::npos);
}

void LogCapture::Flush() {
  if (partial_.empty()) return;
  Push(partialLevel_, std::move(partial_));
  partial_.clear();
}

void LogCapture::Push(int level, std::string text) {
  bytes_ += text.size() + 1;
  lines_.push_back(LogLine{level, std::move(text)});
  if (bytes_ > kMaxCaptureBytes) {
    // Drop the oldest half in one go (amortised O(1) per line).
    size_t drop = lines_.size() / 2;
    for (size_t i = 0; i < drop; i++) bytes_ -= lines_[i].text.size() + 1;
    lines_.erase(lines_.begin(), lines_.begin() + static_cast<std::ptrdiff_t>(drop));
    droppedLines_ += drop;
  }
}

const std::vector<LogLine>& LogCapture::Lines() {
  Flush();
  return lines_;
}

std::string LogCapture::Text() {
  Flush();
  std::string out;
  if (droppedLines_ > 0) out = "[" + std::to_string(droppedLines_) + " earlier lines dropped]\n";
  for (const LogLine& line : lines_) {
    out += line.text;
    out += '\n';
  }
  return out;
}

std::string LogCapture::FirstWarning() {
  for (const LogLine& line : Lines()) {
    if (line.level == LIBBPF_WARN && StartsWith(line.text, "libbpf: ") && line.text.find("-- BEGIN PROG LOAD LOG --") == std::string::npos)
      return line.text;
  }
  return "";
}

std::string LogCapture::FailedProgram() {
  for (const LogLine& line : Lines()) {
    size_t at = line.text.find("prog '");
    if (at == std::string::npos) continue;
    if (line.text.find("failed") == std::string::npos && line.text.find("BEGIN PROG LOAD LOG") == std::string::npos) continue;
    size_t start = at + 6;
    size_t end = line.text.find('\'', start);
    if (end != std::string::npos) return line.text.substr(start, end - start);
  }
  return "";
}

std::string LogCapture::VerifierVerdict() {
  const std::vector<LogLine>& lines = Lines();
  std::string verdict;
  bool inside = false;
  for (const LogLine& line : lines) {
    if (line.text.find("-- BEGIN PROG LOAD LOG --") != std::string::npos) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.text.find("-- END PROG LOAD LOG --") != std::string::npos) break;
    if (line.text.empty() || StartsWith(line.text, "processed ") || StartsWith(line.text, "verification time") ||
        StartsWith(line.text, "stack depth"))
      continue;
    verdict = line.text;
  }
  return verdict;
}

LogScope::LogScope(LogCapture* capture) : previous_(tlCapture) { tlCapture = capture; }

LogScope::~LogScope() { tlCapture = previous_; }

void InstallLibbpfPrint() {
  static std::once_flag once;
  std::call_once(once, [] { libbpf_set_print(PrintCallback); });
}

const char* LogLevelName(int level) {
  switch (level) {
    case LIBBPF_WARN:
      return "warn";
    case LIBBPF_INFO:
      return "info";
    default:
      return "debug";
  }
}

bool ParseLogLevel(const std::string& name, int* level) {
  if (name == "quiet") *level = kLogQuiet;
  else if (name == "warn") *level = LIBBPF_WARN;
  else if (name == "info") *level = LIBBPF_INFO;
  else if (name == "debug") *level = LIBBPF_DEBUG;
  else return false;
  return true;
}

}  // namespace blkheat
