// RUN: fa-opt %s --fa-merge-guards | FileCheck %s
// fa-merge-guards: scf.if ops of one block that test the same condition
// become one, B's dependences moving above A.

// Two guarded loads (fa-lower-to-gpu's row guards): B's index, computed
// between them, moves above A; the op that uses A's result stays where it
// was; the merged guard loads A's then B's element.
// CHECK-LABEL: func.func @loads
// CHECK-SAME: (%[[C:[^:]*]]: i1, %[[M:[^:]*]]: memref<?xf32>, %[[I:[^:]*]]: index, %[[J:[^:]*]]: index)
// CHECK: %[[K:.*]] = arith.addi %[[J]], %[[I]] : index
// CHECK-NEXT: %[[R:.*]]:2 = scf.if %[[C]] -> (f32, f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[M]][%[[I]]]
// CHECK-NEXT: %[[Y:.*]] = memref.load %[[M]][%[[K]]]
// CHECK-NEXT: scf.yield %[[X]], %[[Y]] : f32, f32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: arith.addf %[[R]]#0, %[[R]]#0
// CHECK-NOT: scf.if
// CHECK: return
func.func @loads(%c: i1, %m: memref<?xf32>, %i: index, %j: index) -> (f32, f32) {
  %z = arith.constant 0.0 : f32
  %a = scf.if %c -> f32 {
    %v = memref.load %m[%i] : memref<?xf32>
    scf.yield %v : f32
  } else {
    scf.yield %z : f32
  }
  %s = arith.addf %a, %a : f32
  %k = arith.addi %j, %i : index
  %b = scf.if %c -> f32 {
    %v = memref.load %m[%k] : memref<?xf32>
    scf.yield %v : f32
  } else {
    scf.yield %z : f32
  }
  return %s, %b : f32, f32
}

// Guards without results (stores) merge too, in order.
// CHECK-LABEL: func.func @stores
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[I0:.*]]]
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NOT: scf.if
// CHECK: return
func.func @stores(%c: i1, %m: memref<?xf32>, %i: index, %j: index, %x: f32) {
  scf.if %c {
    memref.store %x, %m[%i] : memref<?xf32>
  }
  scf.if %c {
    memref.store %x, %m[%j] : memref<?xf32>
  }
  return
}

// Where it must not fire: another condition; a store between the guards
// (B's load must not move above it); B using A's result; a barrier between;
// B's index loaded between them (an op with memory effects does not move);
// B storing where a load sits between them. Each keeps both guards.
// CHECK-LABEL: func.func @other_condition
// CHECK-COUNT-2: scf.if
// CHECK-LABEL: func.func @store_between
// CHECK-COUNT-2: scf.if
// CHECK-LABEL: func.func @uses_a
// CHECK-COUNT-2: scf.if
// CHECK-LABEL: func.func @barrier_between
// CHECK-COUNT-2: scf.if
// CHECK-LABEL: func.func @loaded_index
// CHECK-COUNT-2: scf.if
// CHECK-LABEL: func.func @store_past_load
// CHECK-COUNT-2: scf.if
// CHECK: return
func.func @other_condition(%c: i1, %d: i1, %m: memref<?xf32>, %i: index, %x: f32) {
  scf.if %c {
    memref.store %x, %m[%i] : memref<?xf32>
  }
  scf.if %d {
    memref.store %x, %m[%i] : memref<?xf32>
  }
  return
}
func.func @store_between(%c: i1, %m: memref<?xf32>, %i: index, %x: f32) -> (f32, f32) {
  %z = arith.constant 0.0 : f32
  %a = scf.if %c -> f32 {
    %v = memref.load %m[%i] : memref<?xf32>
    scf.yield %v : f32
  } else {
    scf.yield %z : f32
  }
  memref.store %x, %m[%i] : memref<?xf32>
  %b = scf.if %c -> f32 {
    %v = memref.load %m[%i] : memref<?xf32>
    scf.yield %v : f32
  } else {
    scf.yield %z : f32
  }
  return %a, %b : f32, f32
}
func.func @uses_a(%c: i1, %m: memref<?xf32>, %i: index) -> f32 {
  %z = arith.constant 0.0 : f32
  %a = scf.if %c -> f32 {
    %v = memref.load %m[%i] : memref<?xf32>
    scf.yield %v : f32
  } else {
    scf.yield %z : f32
  }
  %s = arith.addf %a, %a : f32
  %b = scf.if %c -> f32 {
    %v = memref.load %m[%i] : memref<?xf32>
    %w = arith.addf %v, %s : f32
    scf.yield %w : f32
  } else {
    scf.yield %z : f32
  }
  return %b : f32
}
func.func @barrier_between(%c: i1, %m: memref<?xf32>, %i: index, %x: f32) {
  scf.if %c {
    memref.store %x, %m[%i] : memref<?xf32>
  }
  gpu.barrier
  scf.if %c {
    memref.store %x, %m[%i] : memref<?xf32>
  }
  return
}
func.func @loaded_index(%c: i1, %m: memref<?xf32>, %n: memref<?xindex>, %i: index) -> (f32, f32) {
  %z = arith.constant 0.0 : f32
  %a = scf.if %c -> f32 {
    %v = memref.load %m[%i] : memref<?xf32>
    scf.yield %v : f32
  } else {
    scf.yield %z : f32
  }
  %l = memref.load %n[%i] : memref<?xindex>
  %b = scf.if %c -> f32 {
    %v = memref.load %m[%l] : memref<?xf32>
    scf.yield %v : f32
  } else {
    scf.yield %z : f32
  }
  return %a, %b : f32, f32
}
func.func @store_past_load(%c: i1, %m: memref<?xf32>, %i: index, %j: index, %x: f32) -> (f32, f32) {
  %z = arith.constant 0.0 : f32
  %a = scf.if %c -> f32 {
    %v = memref.load %m[%i] : memref<?xf32>
    scf.yield %v : f32
  } else {
    scf.yield %z : f32
  }
  %r = memref.load %m[%j] : memref<?xf32>
  scf.if %c {
    memref.store %x, %m[%j] : memref<?xf32>
  }
  return %a, %r : f32, f32
}
