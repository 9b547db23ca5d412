import LarderAPI
import LarderReactor
import LarderStore
import LarderSystem
import LarderWire
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Replies from the store threads, delivered on the loop in batches.
extension Server {

    /// Queues a framed reply from a store thread, which calls `wakeForReplies()` once it
    /// delivered the results it had: a commit's replies wake the loop once, not once each
    /// (on a busy core, each wake-up would let the loop preempt the writer for one reply).
    /// The bytes count in the connection's `usage` from now until the loop takes them.
    func reply(_ bytes: [UInt8], to connectionID: UInt64, usage: ConnectionUsage?, finished: FinishedCall) {
        usage?.add(bytes.count)
        replies.withLock { queue in
            queue.pending.append(PendingReply(connectionID: connectionID, usage: usage, bytes: bytes, finished: finished))
        }
    }

    /// Has the loop deliver the queued replies, unless it was woken for them already.
    func wakeForReplies() {
        let wake = replies.withLock { queue in
            guard !queue.pending.isEmpty && !queue.wakeScheduled else { return false }
            queue.wakeScheduled = true
            return true
        }
        if wake { loop.execute { [self] in deliverReplies() } }
    }

    /// Moves queued replies to their connections and writes each connection once.
    func deliverReplies() {
        var batch: [PendingReply] = []
        replies.withLock { queue in
            swap(&batch, &queue.pending)
            queue.wakeScheduled = false
        }
        var touched: [Connection] = []
        let now = MonotonicClock.nanoseconds()
        for reply in batch {
            callsInFlight -= 1
            finished(reply.finished, connectionID: reply.connectionID, now: now)
            // Out of the queue: counted again below as the connection's output, if it is still open.
            reply.usage?.remove(reply.bytes.count)
            guard let connection = connections[reply.connectionID] else { continue }
            connection.callsInFlight -= 1
            connection.callIDsInFlight.remove(reply.finished.callID)
            if connection.bufferedOutputBytes == 0 { touched.append(connection) }
            connection.enqueue(reply.bytes)
        }
        store.submitBatch {
            for connection in touched where !connection.isClosed {
                connection.flush()
                // Reading may have paused on a full output buffer.
                if !connection.isClosed && !connection.readPaused && connection.decoder.bufferedByteCount > 0 {
                    processFrames(of: connection)
                }
            }
        }
        finishDrainIfDone()
    }
}
