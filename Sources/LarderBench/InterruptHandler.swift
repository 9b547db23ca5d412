import Dispatch
import Foundation
import LarderClient
import LarderWire

/// SIGINT or SIGTERM while a bench runs: the first cancels the run (its data is still deleted),
/// a second calls `onSecond` and exits at once, 128 + its number (130, 143).
final class InterruptHandler: @unchecked Sendable {
    // Sendable because the sources are set once in init and cancelled in stop(), and `count`
    // and `signalNumber` are touched only by the event handlers, which run on the serial `queue`.
    private static let signals = [SIGINT, SIGTERM]
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "larder.bench.interrupt")
    private var count = 0
    private var signalNumber: Int32 = 0

    init(cancellation: BenchCancellation, onSecond: @escaping @Sendable () -> Void) {
        for number in Self.signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [unowned self, source] in
                let first = count == 0
                count += max(1, Int(source.data))
                if first && count == 1 {
                    signalNumber = number
                    cancellation.cancel()
                    StandardError.write("\nlarder bench: \(number == SIGTERM ? "terminated" : "interrupted"); stopping "
                        + "and deleting what the run created (Ctrl-C or SIGTERM again to quit at once)\n")
                } else {
                    onSecond()
                    exit(128 + number)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The exit status of a run the first signal stopped: 128 + its number (130 for SIGINT, 143 for SIGTERM).
    var exitStatus: Int32 { queue.sync { 128 + (signalNumber == 0 ? SIGINT : signalNumber) } }

    /// Restores the default SIGINT and SIGTERM behaviour, unless a signal stopped the run: the
    /// bench is then about to exit with `exitStatus`, and a second signal arriving just now (the
    /// user pressing Ctrl-C again as the clean-up ends) is ignored rather than killing it, which
    /// would report a death by signal instead of that status.
    func stop() {
        let interrupted = queue.sync { count > 0 }
        for source in sources { source.cancel() }
        if !interrupted {
            for number in Self.signals { signal(number, SIG_DFL) }
        }
    }
}
