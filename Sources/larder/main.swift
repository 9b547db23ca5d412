import Foundation
import LarderCLI

// Thin executable: everything lives in LarderCLI so tests drive the same code.
let status = await LarderCommand.main(arguments: Array(CommandLine.arguments.dropFirst()),
                                      environment: ProcessInfo.processInfo.environment)
exit(status)
