// The `ckptfwd` command line tool: one function per subcommand, each returning the process
// exit status (0 ok, 1 a problem was found or an operation failed, 2 usage error).
#pragma once
#include <string>
#include <vector>

namespace ckptfwd::cli {

using Args = std::vector<std::string>;  // arguments after the subcommand name

int cmd_ls(const Args& args);
int cmd_restore(const Args& args);
int cmd_verify(const Args& args);
int cmd_stats(const Args& args);
int cmd_drain(const Args& args);
int cmd_run(const Args& args, const std::string& self_exe);
int cmd_schema(const Args& args);
int cmd_inspect(const Args& args);
int cmd_dump(const Args& args);
int cmd_export(const Args& args);
int cmd_relocate(const Args& args);
int cmd_prune(const Args& args);
int cmd_report(const Args& args);
int cmd_config(const Args& args);

// Prints "ckptfwd: <msg>" on stderr.
void error(const std::string& msg);
// Prints the usage error and a pointer to --help; returns 2.
int usage_error(const std::string& cmd, const std::string& msg);
bool wants_help(const Args& args);

}  // namespace ckptfwd::cli
