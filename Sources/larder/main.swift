import Foundation
import LarderCLI
import LarderSystem

// Thin executable: everything lives in LarderCLI so tests drive the same code.
// First, before anything opens a descriptor: a closed stdout must not be reused by a socket.
_ = StandardDescriptors.closedAtStart

/// The bytes of a C string, as they are.
func bytes(_ pointer: UnsafePointer<CChar>) -> [UInt8] {
    Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
}

// The raw argv bytes, because CommandLine.arguments has already replaced invalid UTF-8 with U+FFFD,
// and the environment's raw entries, which ProcessInfo's environment has replaced the same way.
let rawArguments = (1..<Int(CommandLine.argc)).map { index -> [UInt8] in
    CommandLine.unsafeArgv[index].map { bytes($0) } ?? []
}
var rawEnvironment: [[UInt8]] = []
var entry: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
while let current = entry, let pointer = current.pointee {
    rawEnvironment.append(bytes(pointer))
    entry = current + 1
}
let status = await LarderCommand.main(rawArguments: rawArguments, rawEnvironment: rawEnvironment)
exit(status)
