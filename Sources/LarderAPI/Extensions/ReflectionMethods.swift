/// The method table of `larder.reflection.v1.ServerReflection` under its short name.
public typealias ReflectionMethods = ServerReflectionMethods
