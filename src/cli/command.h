// How a verb declares its command line: options and flags bound to its own variables, their
// checks, subcommands and the callback. app.cc implements it over CLI11, the one file that
// includes CLI11 (its header costs about 12 s of compile time in every file that includes it).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace forge::cli {

// One option or flag of a command; each setter returns the option, to chain them.
class Option {
 public:
  Option& required();
  Option& default_val(const std::string& value);  // the value when not given, shown in the help
  Option& default_val(int value);
  Option& one_of(const std::vector<std::string>& choices);
  Option& in_range(int lo, int hi);
  // One value per occurrence: `--agent oracle tasks/` leaves tasks/ to the positionals.
  Option& one_value_each();
  // The word "auto" stands for `value` (shown as the default "auto").
  Option& auto_is(int value);

 private:
  friend class Command;
  explicit Option(CLI::Option* o) : o_(o) {}
  CLI::Option* o_;
};

// A (sub)command: a handle that verbs pass by value; the command itself lives in the app.
class Command {
 public:
  explicit Command(CLI::App* app) : app_(app) {}

  Command subcommand(const std::string& name, const std::string& description);
  // A command that does nothing by itself: one of its subcommands must be given.
  void require_subcommand();
  // "--name", "-s,--name" or a positional "name".
  Option option(const std::string& name, std::string& into, const std::string& description);
  Option option(const std::string& name, std::vector<std::string>& into, const std::string& description);
  Option option(const std::string& name, int& into, const std::string& description);
  Option flag(const std::string& name, bool& into, const std::string& description);
  void on_run(std::function<void()> callback);
  // How many times the option was given on this command line (0: its default stands).
  std::size_t given(const std::string& name) const;

 private:
  CLI::App* app_;
};

}  // namespace forge::cli
