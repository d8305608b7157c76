// The one wrapper around SQLite's C API: a connection, prepared statements with typed binding and
// reading, and transactions. Every failure is a std::runtime_error that names the database file
// and carries SQLite's own message.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace expr::history {

class Database;

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQL's ?1, ?2, ...
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, const std::vector<double>& values);  // a blob of native doubles
  Statement& bind_null(int index);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // Runs the statement to its next row: true while there is one.
  bool step();
  // Runs a statement that returns no rows, then resets it for the next bindings.
  void run();
  void reset();

  // Columns are numbered from 0.
  bool is_null(int column) const;
  std::string text(int column) const;
  double number(int column) const;
  std::int64_t integer(int column) const;
  std::vector<double> doubles(int column) const;

 private:
  Database& db_;
  sqlite3_stmt* statement_ = nullptr;
};

class Database {
 public:
  // Opens the file, creating it (and its folder) when missing. Waits up to 10 s for another expr
  // that is writing the same history.
  explicit Database(const std::filesystem::path& file);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void execute(std::string_view sql);  // one or more statements, no parameters, no rows
  const std::filesystem::path& file() const { return file_; }
  // Whether the last call failed because another connection held the file past the busy timeout.
  bool was_busy() const;
  [[noreturn]] void fail(std::string_view doing) const;  // throws with SQLite's message for the last call

 private:
  friend class Statement;
  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
};

// Commits when commit() is called; rolls back when it goes out of scope without.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace expr::history
