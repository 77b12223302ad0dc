// io::OutputFile and write_bytes: a regular file is replaced whole on commit and untouched
// otherwise; a device, FIFO or /proc link is written through and a write error there is an
// io-error; a symlink stays a symlink and its target gets the content; temporaries have a name
// nothing mistakes for an output and are gone after every outcome.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "io/file_io.hpp"
#include "io/temporaries.hpp"
#include "scheme/ostream.hpp"
#include "tests/support/run_process.hpp"

using namespace qscheme;
using namespace qscheme::io;
namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;
using qscheme::testing::slurp;

namespace {

struct Scratch : qscheme::testing::Scratch {
  Scratch() : qscheme::testing::Scratch("qscheme_io_output_test") {}
};

Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }

void put(const std::string& path, const std::string& text) { BOOST_REQUIRE(write_bytes(path, bytes_of(text)).ok()); }

// The names in dir that are temporaries of an OutputFile.
std::vector<std::string> temporaries_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".qscheme-tmp.") != std::string::npos) out.push_back(name);
  }
  return out;
}

mode_t lmode(const std::string& path) {
  struct stat st {};
  BOOST_REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

// A character device with the numbers of /dev/full (1, 7) or /dev/null (1, 3), made in dir so
// that a writer which replaces it harms nothing else; the system's own node without privilege.
std::string device(const Scratch& s, const std::string& name, unsigned minor) {
  const std::string path = s / name;
  if (::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, minor)) == 0) return path;
  return minor == 7 ? "/dev/full" : "/dev/null";
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_regular_file_changes_only_on_commit) {
  Scratch s;
  const std::string target = s / "out.json";
  put(target, "old");
  ::chmod(target.c_str(), 0640);
  {
    auto f = OutputFile::open(target);
    BOOST_REQUIRE(f.ok());
    BOOST_REQUIRE(f->write(bytes_of("new ")).ok());
    // Larger than the buffer: goes straight to the file, after what is buffered.
    const Bytes big(200000, 'x');
    BOOST_REQUIRE(f->write(big).ok());
    BOOST_REQUIRE(f->write(bytes_of(" end")).ok());
    BOOST_TEST(slurp(target) == "old");
    const auto temps = temporaries_in(s.dir);
    BOOST_REQUIRE(temps.size() == 1u);
    BOOST_TEST(temps[0].starts_with(".out.json.qscheme-tmp."));
    BOOST_REQUIRE(f->commit().ok());
    BOOST_TEST(f->commit().code() == ErrorCode::internal);
  }
  BOOST_TEST(slurp(target) == "new " + std::string(200000, 'x') + " end");
  BOOST_TEST((lmode(target) & 07777) == 0640u);
  BOOST_TEST(temporaries_in(s.dir).empty());
  // Abandoned without commit: the temporary goes, the target keeps its content.
  {
    auto f = OutputFile::open(target);
    BOOST_REQUIRE(f.ok());
    BOOST_REQUIRE(f->write(bytes_of("lost")).ok());
    // Moving keeps one owner of the temporary.
    OutputFile moved = std::move(*f);
    BOOST_TEST(temporaries_in(s.dir).size() == 1u);
  }
  BOOST_TEST(slurp(target).starts_with("new "));
  BOOST_TEST(temporaries_in(s.dir).empty());
}

BOOST_AUTO_TEST_CASE(bad_paths_are_io_errors_and_leave_nothing) {
  Scratch s;
  for (const std::string& p : {s / "no/such/x.npy", s.dir.string(), s / "dir/", std::string()}) {
    const Status st = write_bytes(p, bytes_of("x"));
    BOOST_TEST(st.code() == ErrorCode::io_error, p);
  }
  BOOST_TEST(write_bytes(s.dir.string(), bytes_of("x")).message().find("directory") != std::string::npos);
  BOOST_TEST(fs::is_empty(s.dir));
}

// A writer that renames over whatever is at the path turns a device into a regular file (as
// root) and reports success; a device keeps its node and its errors here.
BOOST_AUTO_TEST_CASE(devices_are_written_through) {
  Scratch s;
  const std::string full = device(s, "full", 7);
  const Status st = write_bytes(full, bytes_of("data"));
  BOOST_TEST(st.code() == ErrorCode::io_error, st.to_string());
  BOOST_TEST(st.message() == "cannot write '" + full + "': No space left on device");
  BOOST_TEST(S_ISCHR(lmode(full)));
  // Through OutputFile, the error comes from commit() when the bytes were buffered.
  auto f = OutputFile::open(full);
  BOOST_REQUIRE(f.ok());
  BOOST_REQUIRE(f->write(bytes_of("data")).ok());
  BOOST_TEST(f->commit().code() == ErrorCode::io_error);

  const std::string null = device(s, "null", 3);
  BOOST_TEST(write_bytes(null, bytes_of("data")).ok());
  BOOST_TEST(S_ISCHR(lmode(null)));
  BOOST_TEST(temporaries_in(s.dir).empty());
}

BOOST_AUTO_TEST_CASE(a_fifo_is_written_through) {
  Scratch s;
  const std::string fifo = s / "pipe";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The read end open first (non-blocking), so the writer's open does not wait; the data fits
  // in the pipe's buffer.
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  BOOST_REQUIRE(rd >= 0);
  const Status st = write_bytes(fifo, bytes_of("through the pipe"));
  char buf[64] = {};
  const ssize_t n = ::read(rd, buf, sizeof buf);
  ::close(rd);
  BOOST_TEST(st.ok(), st.to_string());
  BOOST_TEST(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0) == "through the pipe");
  BOOST_TEST(S_ISFIFO(lmode(fifo)));
  BOOST_TEST(temporaries_in(s.dir).empty());
}

BOOST_AUTO_TEST_CASE(a_symlink_stays_and_its_target_gets_the_content) {
  Scratch s;
  put(s / "real.json", "old");
  fs::create_symlink("real.json", s / "link.json");
  fs::create_symlink("link.json", s / "chain.json");
  put(s / "link.json", "via link");
  BOOST_TEST(fs::is_symlink(s / "link.json"));
  BOOST_TEST(fs::read_symlink(s / "link.json") == "real.json");
  BOOST_TEST(slurp(s / "real.json") == "via link");
  put(s / "chain.json", "via chain");
  BOOST_TEST(fs::is_symlink(s / "chain.json"));
  BOOST_TEST(fs::is_symlink(s / "link.json"));
  BOOST_TEST(slurp(s / "real.json") == "via chain");
  // A dangling link: its target is created.
  fs::create_symlink("made.json", s / "dangling.json");
  put(s / "dangling.json", "made");
  BOOST_TEST(fs::is_symlink(s / "dangling.json"));
  BOOST_TEST(slurp(s / "made.json") == "made");
  // A link into /proc stands for an open file (as /dev/stdout does): written through, appended.
  const int fd = ::open((s / "opened.txt").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(::write(fd, "first ", 6) == 6);
  fs::create_symlink("/proc/self/fd/" + std::to_string(fd), s / "fd.txt");
  put(s / "fd.txt", "second");
  ::close(fd);
  BOOST_TEST(fs::is_symlink(s / "fd.txt"));
  BOOST_TEST(slurp(s / "opened.txt") == "first second");
  // Other links into /proc are names like any other: the file is replaced, not appended to.
  fs::create_symlink("/proc/self/root" + (s / "real.json"), s / "root.json");
  put(s / "root.json", "via root");
  BOOST_TEST(fs::is_symlink(s / "root.json"));
  BOOST_TEST(slurp(s / "real.json") == "via root");
  BOOST_TEST(temporaries_in(s.dir).empty());
}

// A temporary left by SIGKILL must never pass for an output: hidden, in the target's folder,
// not ending in the target's extension, different every time.
BOOST_AUTO_TEST_CASE(temporary_names_pass_for_no_output) {
  const std::string a = temporary_name("dir/x.npy");
  const std::string b = temporary_name("dir/x.npy");
  BOOST_TEST(a != b);
  BOOST_TEST(fs::path(a).parent_path() == "dir");
  BOOST_TEST(fs::path(a).filename().string().starts_with(".x.npy.qscheme-tmp." + std::to_string(::getpid()) + "."));
  BOOST_TEST(!a.ends_with(".npy"));
  // A name near the limit is shortened, so the temporary can still be created.
  const std::string longest(255, 'n');
  BOOST_TEST(fs::path(temporary_name(longest)).filename().string().size() <= 255u);
  Scratch s;
  put(s / longest, "fits");
  BOOST_TEST(slurp(s / longest) == "fits");
}
