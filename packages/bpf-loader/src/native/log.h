// Per-call capture of libbpf's log (libbpf's print callback is process-global).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <string>
#include <vector>

namespace blkheat {

// libbpf levels: LIBBPF_WARN = 0, LIBBPF_INFO = 1, LIBBPF_DEBUG = 2. kQuiet keeps warnings
// (for error messages) but delivers nothing to onLog.
constexpr int kLogQuiet = -1;

struct LogLine {
  int level;
  std::string text;
};

// Collects the lines libbpf prints on one thread while a LogScope is active.
class LogCapture {
 public:
  // Lines more verbose than captureLevel are dropped without being formatted.
  explicit LogCapture(int captureLevel);

  void Append(int level, const char* format, va_list args);
  const std::vector<LogLine>& Lines();
  // Everything captured, one line per row.
  std::string Text();
  // The first "libbpf: ..." warning, the most telling line for a failure ("" if none).
  std::string FirstWarning();
  // For verifier failures: the program named in "prog 'x': ..." and the verifier's last
  // complaint (the last line of the PROG LOAD LOG before its statistics).
  std::string FailedProgram();
  std::string VerifierVerdict();
  int captureLevel() const { return captureLevel_; }

 private:
  void Flush();
  void Push(int level, std::string text);

  int captureLevel_;
  std::vector<LogLine> lines_;
  std::string partial_;
  int partialLevel_ = 0;
  size_t bytes_ = 0;
  size_t droppedLines_ = 0;
};

// Routes libbpf's output on this thread into `capture` for the scope's lifetime.
class LogScope {
 public:
  explicit LogScope(LogCapture* capture);
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  LogCapture* previous_;
};

// Installs the print callback once per process. Outside a LogScope libbpf prints nothing.
void InstallLibbpfPrint();

const char* LogLevelName(int level);
// "quiet" | "warn" | "info" | "debug" -> level; returns false for anything else.
bool ParseLogLevel(const std::string& name, int* level);

}  // namespace blkheat
