import Foundation

/// This process's id.
func getProcessID() -> Int32 { ProcessInfo.processInfo.processIdentifier }

/// Seconds since 1970 on the wall clock.
func wallClockSeconds() -> Double { Date().timeIntervalSince1970 }
