// SQLite through its C API.
#include "history/database.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstring>
#include <stdexcept>

namespace expr::history {

Database::Database(const std::filesystem::path& file) : file_(file) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create its folder: {}", file.string(), ec.message()));
  if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error(fmt::format("{}: cannot open the history: {}", file.string(), why));
  }
  sqlite3_busy_timeout(db_, 10'000);
  sqlite3_extended_result_codes(db_, 1);
  // A file that is not a database says so on the first statement that reads it.
  execute("PRAGMA foreign_keys = ON");
}

Database::~Database() { sqlite3_close(db_); }

bool Database::was_busy() const { return (sqlite3_extended_errcode(db_) & 0xff) == SQLITE_BUSY; }

void Database::fail(std::string_view doing) const {
  throw std::runtime_error(fmt::format("{}: {}: {}", file_.string(), doing, sqlite3_errmsg(db_)));
}

void Database::execute(std::string_view sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw std::runtime_error(fmt::format("{}: {}", file_.string(), why));
  }
}

Statement::Statement(Database& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.db_, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr) != SQLITE_OK)
    db.fail(fmt::format("cannot prepare '{}'", sql.substr(0, 60)));
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Statement& Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(statement_, index, value) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int index, const std::vector<double>& values) {
  if (sqlite3_bind_blob64(statement_, index, values.data(), values.size() * sizeof(double), SQLITE_TRANSIENT) != SQLITE_OK)
    db_.fail("bind");
  return *this;
}
Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(statement_, index) != SQLITE_OK) db_.fail("bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail("cannot run a statement");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(statement_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(statement_, column))) : "";
}
double Statement::number(int column) const { return sqlite3_column_double(statement_, column); }
std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(statement_, column); }
std::vector<double> Statement::doubles(int column) const {
  const auto* p = sqlite3_column_blob(statement_, column);
  std::vector<double> out(static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)) / sizeof(double));
  if (p && !out.empty()) std::memcpy(out.data(), p, out.size() * sizeof(double));
  return out;
}

Transaction::Transaction(Database& db) : db_(db) { db_.execute("BEGIN IMMEDIATE"); }
Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.execute("ROLLBACK");
    } catch (const std::exception&) {  // nothing more to do while unwinding
    }
  }
}
void Transaction::commit() {
  db_.execute("COMMIT");
  done_ = true;
}

}  // namespace expr::history
