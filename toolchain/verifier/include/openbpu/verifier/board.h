// A development board reached over SSH (libssh): key authentication, the host key checked
// against a known_hosts file or a pinned SHA-256 fingerprint, commands with a deadline, and
// files moved with SFTP. Every failure throws openbpu::Error with a sentence that says what
// happened (unreachable, refused, host key changed, command failed with its stderr, timeout).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace openbpu::verifier {

struct BoardOptions {
  std::string host;
  int port = 22;
  std::string user = "root";
  std::string key_file;          // private key; empty: ~/.ssh/id_ed25519, id_ecdsa, id_rsa
  std::string known_hosts;       // empty: ~/.ssh/known_hosts
  std::string host_fingerprint;  // "SHA256:..." (ssh-keygen -lf); when set, known_hosts is not read
  int connect_timeout_s = 10;    // TCP connect, key exchange and every single SFTP request
};

struct CommandResult {
  int exit_status = -1;
  std::string out, err;
};

// "host", "host:port" or "[v6]:port" (the port defaults to `default_port`).
void split_host_port(const std::string& text, int default_port, std::string* host, int* port);

class BoardSession {
 public:
  explicit BoardSession(const BoardOptions& options);  // connects and authenticates
  ~BoardSession();
  BoardSession(const BoardSession&) = delete;
  BoardSession& operator=(const BoardSession&) = delete;

  const std::string& name() const { return name_; }  // "user@host:port"

  // Runs `command` through the board's shell; throws on a lost connection or when the command
  // runs longer than `timeout_s` (its channel is then closed).
  CommandResult run(const std::string& command, int timeout_s);

  void upload(const std::vector<uint8_t>& bytes, const std::string& remote_path, int mode = 0644);
  // The file's bytes, at most `max_bytes` + 1 of them: a longer file comes back as its first
  // max_bytes + 1 bytes, so the caller can say it is too long without holding all of it.
  // Throws when the file cannot be opened or the transfer breaks off (naming the file).
  std::vector<uint8_t> download(const std::string& remote_path, size_t max_bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string name_;
};

// Single-quoted for a POSIX shell.
std::string shell_quote(const std::string& text);

}  // namespace openbpu::verifier
