import LarderSystem
import Testing

@Suite("ThreadOwner")
struct ThreadOwnerTests {
    final class Shared: Sendable {
        let owner = ThreadOwner()
    }

    /// What another thread sees of `shared.owner`: whether it is the owner, and whether it could claim it.
    private static func fromAnotherThread(_ shared: Shared, claim: Bool) -> (isOwner: Bool, claimed: Bool) {
        let seen = LockedValue((isOwner: false, claimed: false))
        SystemThread(name: "test-owner") {
            let isOwner = shared.owner.isCurrentThread
            let claimed = claim && shared.owner.claim()
            seen.withLock { $0 = (isOwner, claimed) }
        }.join()
        return seen.withLock { $0 }
    }

    @Test("one thread at a time owns it; another sees it is not the owner and cannot claim it")
    func oneOwnerAtATime() {
        let shared = Shared()
        let (unownedAtFirst, mineAtFirst) = (shared.owner.isUnowned, shared.owner.isCurrentThread)
        #expect(unownedAtFirst && !mineAtFirst)
        let claimed = shared.owner.claim()
        #expect(claimed)
        let (mineAfterClaim, unownedAfterClaim) = (shared.owner.isCurrentThread, shared.owner.isUnowned)
        #expect(mineAfterClaim && !unownedAfterClaim)
        let claimedAgain = shared.owner.claim()
        #expect(!claimedAgain, "a claim by the owner itself fails: it is owned")
        let other = Self.fromAnotherThread(shared, claim: true)
        #expect(!other.isOwner && !other.claimed)
        shared.owner.release()
        let (unownedAfterRelease, mineAfterRelease) = (shared.owner.isUnowned, shared.owner.isCurrentThread)
        #expect(unownedAfterRelease && !mineAfterRelease)
        let afterRelease = Self.fromAnotherThread(shared, claim: true)
        #expect(afterRelease.claimed && !afterRelease.isOwner)
        let mineAfterOtherClaimed = shared.owner.isCurrentThread
        #expect(!mineAfterOtherClaimed, "the other thread owns it now")
        shared.owner.take()
        let mineAfterTake = shared.owner.isCurrentThread
        #expect(mineAfterTake, "take makes the caller the owner whoever owned it")
    }
}
