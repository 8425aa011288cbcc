// exasim command line: a thin main. Parses arguments, runs the chosen subcommand, and turns
// every error into one line on stderr with a non-zero exit code.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>

#include "apps/cli/commands.hpp"
#include "hw/catalog.hpp"
#include "hw/error.hpp"

int main(int argc, char** argv) {
  exasim::cli::Context ctx;
  ctx.configs_dir = exasim::hw::default_configs_dir();
  CLI::App app{"exasim: a discrete-event simulator of GPU clusters running LLM training and serving"};
  app.set_version_flag("--version", std::string("exasim ") + EXASIM_VERSION);
  app.option_defaults()->always_capture_default();
  app.add_option("--configs", ctx.configs_dir, "catalog folder (configs/)");
  app.require_subcommand(1);
  exasim::cli::add_run_command(app, ctx);
  exasim::cli::add_hw_command(app, ctx);
  exasim::cli::add_validate_command(app, ctx);
  exasim::cli::add_kernel_command(app, ctx);
  exasim::cli::add_plan_command(app, ctx);
  exasim::cli::add_sweep_command(app, ctx);
  exasim::cli::add_calibrate_command(app, ctx);
  exasim::cli::add_collective_command(app, ctx);
  exasim::cli::add_topo_command(app, ctx);
  try {
    app.parse(argc, argv);
    return ctx.handler ? ctx.handler() : 0;
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line in the exasim error format; --help has the details.
    std::cerr << "exasim: error: <command line>: " << e.what() << " (run with --help for usage)\n";
    return 2;
  } catch (const exasim::Error& e) {
    std::cerr << "exasim: error: " << e.describe() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "exasim: error: out of memory\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "exasim: error: internal: " << e.what() << " (please report this with the input that caused it)\n";
    return 4;
  }
}
