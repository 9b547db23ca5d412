import LarderServerMain
import LarderSystem
#if canImport(Glibc)
import Glibc
#endif

// First, before anything opens a descriptor: a closed stdout or stderr must not be reused
// by a socket, which would then receive the server's log lines.
_ = StandardDescriptors.closedAtStart
exit(ServerMain.run(arguments: Array(CommandLine.arguments.dropFirst()),
                    environment: ProcessInfoEnvironment.current))
