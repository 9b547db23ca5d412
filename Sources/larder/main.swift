import Foundation
import LarderCLI
import LarderSystem

// Thin executable: everything lives in LarderCLI so tests drive the same code.
// First, before anything opens a descriptor: a closed stdout must not be reused by a socket.
_ = StandardDescriptors.closedAtStart
// The raw argv bytes, because CommandLine.arguments has already replaced invalid UTF-8 with U+FFFD.
let rawArguments = (1..<Int(CommandLine.argc)).map { index -> [UInt8] in
    guard let pointer = CommandLine.unsafeArgv[index] else { return [] }
    return Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
                                     count: strlen(pointer)))
}
let status = await LarderCommand.main(rawArguments: rawArguments, environment: ProcessInfo.processInfo.environment)
exit(status)
