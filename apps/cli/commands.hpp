#pragma once
// Subcommands of the exasim CLI. Each registers itself on the app and sets a handler that runs
// after parsing; handlers throw exasim::Error on bad input and return the exit code.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace exasim::cli {

struct Context {
  std::string configs_dir;                // --configs, default: the installation's configs/
  std::function<int()> handler;           // set by the chosen subcommand
};

void add_run_command(CLI::App& app, Context& ctx);
void add_hw_command(CLI::App& app, Context& ctx);
void add_validate_command(CLI::App& app, Context& ctx);
void add_kernel_command(CLI::App& app, Context& ctx);
void add_plan_command(CLI::App& app, Context& ctx);
void add_sweep_command(CLI::App& app, Context& ctx);
void add_calibrate_command(CLI::App& app, Context& ctx);
void add_collective_command(CLI::App& app, Context& ctx);
void add_topo_command(CLI::App& app, Context& ctx);

}  // namespace exasim::cli
