import LarderAPI
import LarderReactor
import LarderStore
import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// Replies from the store threads, delivered on the loop in batches.
extension Server {

    /// Queues a framed reply from any thread; the loop writes it on its next turn.
    func reply(_ bytes: [UInt8], to connectionID: UInt64, finished: FinishedCall) {
        let wasEmpty = replies.withLock { pending in
            pending.append(PendingReply(connectionID: connectionID, bytes: bytes, finished: finished))
            return pending.count == 1
        }
        if wasEmpty { loop.execute { [self] in deliverReplies() } }
    }

    /// Moves queued replies to their connections and writes each connection once.
    func deliverReplies() {
        var batch: [PendingReply] = []
        replies.withLock { swap(&batch, &$0) }
        var touched: [Connection] = []
        let now = MonotonicClock.nanoseconds()
        for reply in batch {
            callsInFlight -= 1
            finished(reply.finished, connectionID: reply.connectionID, now: now)
            guard let connection = connections[reply.connectionID] else { continue }
            connection.callsInFlight -= 1
            if connection.bufferedOutputBytes == 0 { touched.append(connection) }
            connection.enqueue(reply.bytes)
        }
        store.submitBatch {
            for connection in touched where connections[connection.id] != nil {
                connection.flush()
                // Reading may have paused on a full output buffer.
                if !connection.readPaused && connection.decoder.bufferedByteCount > 0 { processFrames(of: connection) }
            }
        }
        finishDrainIfDone()
    }
}
