import LarderServerMain
#if canImport(Glibc)
import Glibc
#endif

exit(ServerMain.run(arguments: Array(CommandLine.arguments.dropFirst()),
                    environment: ProcessInfoEnvironment.current))
