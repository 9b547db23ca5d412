import Foundation
import LarderSystem

/// `--token-file PATH`: the bearer token kept in a file. Every file `larder-server --auth-token-file`
/// accepts gives the same token here; the CLI is laxer (it trims surrounding whitespace).
enum TokenFile {
    /// The file's text without surrounding whitespace and newlines.
    /// - Throws: a usage error when the file cannot be read, is empty, or is not UTF-8.
    static func read(_ path: String, source: String, usagePath: String) throws(CLIError) -> String {
        func usage(_ why: String) -> CLIError { .usage("\(source) \(path): \(why)", command: usagePath) }
        let data: [UInt8]
        do throws(FileContents.Failure) {
            data = try FileContents.read(path, maxBytes: 64 * 1024)
        } catch .tooLarge(let count) {
            throw usage("the file is \(count) bytes or more; a token file holds one token")
        } catch {
            throw usage("cannot read the file (\(error.reason))")
        }
        guard let text = String(validating: data, as: UTF8.self) else { throw usage("the file is not valid UTF-8") }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw usage("the file is empty") }
        guard !token.contains(where: \.isNewline) else { throw usage("the file holds more than one line") }
        return token
    }
}
