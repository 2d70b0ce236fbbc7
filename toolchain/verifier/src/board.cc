#include "openbpu/verifier/board.h"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstdlib>
#include <filesystem>

#include "openbpu/common/error.h"

namespace openbpu::verifier {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string home_file(const char* relative) {
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/" + relative;
}

std::string sftp_error_text(sftp_session sftp, ssh_session session) {
  const int code = sftp_get_error(sftp);
  switch (code) {
    case SSH_FX_NO_SUCH_FILE: return "no such file";
    case SSH_FX_PERMISSION_DENIED: return "permission denied";
    case SSH_FX_NO_SUCH_PATH: return "no such folder";
    case SSH_FX_NO_CONNECTION: return "no connection";
    case SSH_FX_CONNECTION_LOST: return "connection lost";
    default: break;
  }
  const char* text = ssh_get_error(session);
  return (text != nullptr && *text != '\0') ? std::string(text) : "SFTP error " + std::to_string(code);
}

}  // namespace

void split_host_port(const std::string& text, int default_port, std::string* host, int* port) {
  *port = default_port;
  std::string h = text, p;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos) raise("board address '", text, "': missing ']'");
    h = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') raise("board address '", text, "': expected ':PORT' after ']'");
      p = text.substr(close + 2);
    }
  } else if (text.find(':') != std::string::npos && text.find(':') == text.rfind(':')) {
    h = text.substr(0, text.find(':'));
    p = text.substr(text.find(':') + 1);
  }
  if (h.empty()) raise("board address '", text, "' has no host");
  if (!p.empty()) {
    char* end = nullptr;
    const long v = std::strtol(p.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > 65535) raise("board address '", text, "': port '", p, "' is not 1..65535");
    *port = static_cast<int>(v);
  }
  *host = h;
}

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

// libssh's blocking calls (SFTP requests, opening channels) wait for a frozen peer forever. The
// watchdog bounds every such step: armed with a deadline around the call, it shuts the socket
// down when the deadline passes (shutdown(2) is safe from another thread, unlike close), so the
// call fails at once and the step reports that the board stopped answering.
class Watchdog {
 public:
  Watchdog() : thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  void arm(int fd, int seconds) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fd_ = fd;
      deadline_ = Clock::now() + std::chrono::seconds(seconds);
      armed_ = true;
    }
    changed_.notify_all();
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
  }
  bool fired() {
    std::lock_guard<std::mutex> lock(mutex_);
    return fired_;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      if (!armed_) {
        changed_.wait(lock);
      } else if (changed_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
                 Clock::now() >= deadline_) {
        if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
        fired_ = true;
        armed_ = false;
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false, armed_ = false, fired_ = false;
  int fd_ = -1;
  Clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace

struct BoardSession::Impl {
  ssh_session session = nullptr;
  sftp_session sftp = nullptr;
  int step_timeout_s = 10;
  Watchdog watchdog;

  // Arms the watchdog for one blocking step; `what` names the step in the error.
  struct Step {
    Impl& impl;
    Step(Impl& i) : impl(i) { impl.watchdog.arm(ssh_get_fd(impl.session), impl.step_timeout_s); }
    ~Step() { impl.watchdog.disarm(); }
  };
  void close_file(sftp_file file) {
    Step step(*this);
    sftp_close(file);
  }
  // After a failed step: the reason, the watchdog's if it cut the connection.
  std::string failure(const std::string& reason) {
    if (watchdog.fired()) {
      return "the board stopped answering (no reply for " + std::to_string(step_timeout_s) +
             " s); connection dropped";
    }
    return reason;
  }

  ~Impl() {
    if (sftp != nullptr) sftp_free(sftp);
    if (session != nullptr) {
      if (ssh_is_connected(session)) ssh_disconnect(session);
      ssh_free(session);
    }
  }

  std::string error() const {
    const char* text = ssh_get_error(session);
    return text != nullptr ? text : "unknown libssh error";
  }

  sftp_session sftp_channel(const std::string& board) {
    if (sftp != nullptr) return sftp;
    Step step(*this);
    sftp = sftp_new(session);
    if (sftp == nullptr) raise("board ", board, ": cannot open an SFTP channel: ", failure(error()));
    if (sftp_init(sftp) != SSH_OK) {
      const std::string why = failure(sftp_error_text(sftp, session));
      sftp_free(sftp);
      sftp = nullptr;
      raise("board ", board, ": the SFTP subsystem did not start: ", why);
    }
    return sftp;
  }
};

BoardSession::BoardSession(const BoardOptions& o) : impl_(std::make_unique<Impl>()) {
  name_ = o.user + "@" + o.host + ":" + std::to_string(o.port);
  impl_->step_timeout_s = o.connect_timeout_s;
  ssh_session s = impl_->session = ssh_new();
  if (s == nullptr) raise("board ", name_, ": libssh could not create a session");
  const int port = o.port;
  const long timeout = o.connect_timeout_s;
  const int no = 0;
  const std::string known_hosts = o.known_hosts.empty() ? home_file(".ssh/known_hosts") : o.known_hosts;
  if (ssh_options_set(s, SSH_OPTIONS_HOST, o.host.c_str()) != SSH_OK ||
      ssh_options_set(s, SSH_OPTIONS_PORT, &port) != SSH_OK ||
      ssh_options_set(s, SSH_OPTIONS_USER, o.user.c_str()) != SSH_OK ||
      ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) != SSH_OK ||
      ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no) != SSH_OK ||
      ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, known_hosts.c_str()) != SSH_OK ||
      ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") != SSH_OK) {
    raise("board ", name_, ": invalid SSH option: ", impl_->error());
  }
  if (ssh_connect(s) != SSH_OK) {
    raise("board ", name_, " is unreachable: ", impl_->error(), " (is the board up, and sshd listening on port ",
          o.port, "?)");
  }

  // The host key, before anything is sent that the server could misuse.
  if (!o.host_fingerprint.empty()) {
    ssh_key key = nullptr;
    if (ssh_get_server_publickey(s, &key) != SSH_OK) raise("board ", name_, ": no host key: ", impl_->error());
    unsigned char* hash = nullptr;
    size_t length = 0;
    const int rc = ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length);
    ssh_key_free(key);
    if (rc != 0) raise("board ", name_, ": cannot hash the host key");
    char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
    ssh_clean_pubkey_hash(&hash);
    const std::string got = text != nullptr ? text : "";
    ssh_string_free_char(text);
    if (got != o.host_fingerprint) {
      raise("board ", name_, ": HOST KEY MISMATCH: the board presents ", got, ", expected ", o.host_fingerprint,
            " (--host-key-fingerprint); refusing to connect");
    }
  } else {
    switch (ssh_session_is_known_server(s)) {
      case SSH_KNOWN_HOSTS_OK: break;
      case SSH_KNOWN_HOSTS_CHANGED:
        raise("board ", name_, ": HOST KEY CHANGED: the board's host key differs from the one in ", known_hosts,
              " (a reinstalled board, or someone in between); refusing to connect. If the change is expected, "
              "remove the old entry (ssh-keygen -R) and add the new key");
      case SSH_KNOWN_HOSTS_OTHER:
        raise("board ", name_, ": HOST KEY CHANGED: ", known_hosts,
              " holds a key of another type for this host; refusing to connect");
      case SSH_KNOWN_HOSTS_NOT_FOUND:
      case SSH_KNOWN_HOSTS_UNKNOWN:
        raise("board ", name_, ": unknown host key (not in ", known_hosts,
              "); add it (ssh-keyscan -p PORT HOST >> known_hosts, after checking it) or pass "
              "--host-key-fingerprint SHA256:...");
      default: raise("board ", name_, ": cannot check the host key against ", known_hosts, ": ", impl_->error());
    }
  }

  std::vector<std::string> keys;
  if (!o.key_file.empty()) {
    keys.push_back(o.key_file);
  } else {
    for (const char* k : {".ssh/id_ed25519", ".ssh/id_ecdsa", ".ssh/id_rsa"}) {
      if (fs::exists(home_file(k))) keys.push_back(home_file(k));
    }
    if (keys.empty()) raise("board ", name_, ": no private key: pass --key (no ~/.ssh/id_ed25519, id_ecdsa or id_rsa)");
  }
  for (const std::string& path : keys) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(path.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK) {
      raise("board ", name_, ": cannot read the private key ", path,
            " (missing, unreadable, or protected by a passphrase, which is not supported)");
    }
    int rc = SSH_AUTH_ERROR;
    {
      Impl::Step step(*impl_);
      rc = ssh_userauth_publickey(s, nullptr, key);
    }
    ssh_key_free(key);
    if (rc == SSH_AUTH_SUCCESS) return;
    if (rc == SSH_AUTH_ERROR) raise("board ", name_, ": authentication failed: ", impl_->failure(impl_->error()));
  }
  std::string tried;
  for (const std::string& k : keys) tried += (tried.empty() ? "" : ", ") + k;
  raise("board ", name_, ": authentication refused for user '", o.user, "' with the key ", tried,
        " (is its public key in the board's authorized_keys?)");
}

BoardSession::~BoardSession() = default;

CommandResult BoardSession::run(const std::string& command, int timeout_s) {
  ssh_channel channel = ssh_channel_new(impl_->session);
  if (channel == nullptr) raise("board ", name_, ": cannot open a channel: ", impl_->error());
  struct Closer {
    ssh_channel c;
    ~Closer() {
      if (ssh_channel_is_open(c)) ssh_channel_close(c);
      ssh_channel_free(c);
    }
  } closer{channel};
  {
    Impl::Step step(*impl_);
    if (ssh_channel_open_session(channel) != SSH_OK) {
      raise("board ", name_, ": cannot open a session: ", impl_->failure(impl_->error()));
    }
    if (ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
      raise("board ", name_, ": cannot run a command: ", impl_->failure(impl_->error()));
    }
  }
  CommandResult result;
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  char buffer[16384];
  // stdout waits up to 50 ms for data; stderr is drained without waiting.
  auto drain = [&](int is_stderr, int timeout_ms) {
    const int n = timeout_ms > 0 ? ssh_channel_read_timeout(channel, buffer, sizeof buffer, is_stderr, timeout_ms)
                                 : ssh_channel_read_nonblocking(channel, buffer, sizeof buffer, is_stderr);
    if (n == SSH_ERROR) {
      raise("board ", name_, ": connection lost while running a command: ", impl_->failure(impl_->error()));
    }
    if (n > 0) (is_stderr ? result.err : result.out).append(buffer, static_cast<size_t>(n));
    return n > 0;
  };
  while (true) {
    const bool got_out = drain(0, 50);
    const bool got_err = drain(1, 0);
    if (!got_out && !got_err && ssh_channel_is_eof(channel)) {
      while (drain(0, 0) || drain(1, 0)) {
      }
      break;
    }
    if (Clock::now() > deadline) {
      raise("board ", name_, ": the command did not finish within ", timeout_s, " s (", command, ")");
    }
  }
  // The exit status arrives with (or just after) EOF.
  Impl::Step step(*impl_);
  for (int i = 0; i < 50 && result.exit_status < 0; ++i) {
    result.exit_status = ssh_channel_get_exit_status(channel);
    if (result.exit_status < 0 && !ssh_channel_is_open(channel)) break;
  }
  if (result.exit_status < 0) raise("board ", name_, ": the command ended without an exit status (", command, ")");
  return result;
}

void BoardSession::upload(const std::vector<uint8_t>& bytes, const std::string& remote_path, int mode) {
  sftp_session sftp = impl_->sftp_channel(name_);
  sftp_file file = nullptr;
  {
    Impl::Step step(*impl_);
    file = sftp_open(sftp, remote_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, static_cast<mode_t>(mode));
  }
  if (file == nullptr) {
    raise("board ", name_, ": cannot create ", remote_path, ": ", impl_->failure(sftp_error_text(sftp, impl_->session)));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const size_t chunk = std::min<size_t>(32768, bytes.size() - done);
    ssize_t n = 0;
    {
      Impl::Step step(*impl_);
      n = sftp_write(file, bytes.data() + done, chunk);
    }
    if (n <= 0) {
      const std::string why = impl_->failure(sftp_error_text(sftp, impl_->session));
      impl_->close_file(file);
      raise("board ", name_, ": upload of ", remote_path, " interrupted after ", done, " of ", bytes.size(),
            " bytes: ", why);
    }
    done += static_cast<size_t>(n);
  }
  int closed = SSH_ERROR;
  {
    Impl::Step step(*impl_);
    closed = sftp_close(file);
  }
  if (closed != SSH_OK) {
    raise("board ", name_, ": upload of ", remote_path, " failed at close: ",
          impl_->failure(sftp_error_text(sftp, impl_->session)));
  }
}

std::vector<uint8_t> BoardSession::download(const std::string& remote_path, size_t max_bytes) {
  sftp_session sftp = impl_->sftp_channel(name_);
  sftp_file file = nullptr;
  {
    Impl::Step step(*impl_);
    file = sftp_open(sftp, remote_path.c_str(), O_RDONLY, 0);
  }
  if (file == nullptr) {
    raise("board ", name_, ": cannot open ", remote_path, ": ", impl_->failure(sftp_error_text(sftp, impl_->session)));
  }
  std::vector<uint8_t> bytes;
  char buffer[32768];
  while (true) {
    ssize_t n = 0;
    {
      Impl::Step step(*impl_);
      n = sftp_read(file, buffer, sizeof buffer);
    }
    if (n == 0) break;
    if (n < 0) {
      const std::string why = impl_->failure(sftp_error_text(sftp, impl_->session));
      impl_->close_file(file);
      raise("board ", name_, ": download of ", remote_path, " interrupted after ", bytes.size(), " bytes (of at most ", max_bytes,
            "): ", why);
    }
    bytes.insert(bytes.end(), buffer, buffer + std::min<size_t>(static_cast<size_t>(n), max_bytes + 1 - bytes.size()));
    if (bytes.size() > max_bytes) break;
  }
  impl_->close_file(file);
  return bytes;
}

}  // namespace openbpu::verifier
