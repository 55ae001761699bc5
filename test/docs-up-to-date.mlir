// The dialect reference in docs/dialects is the one ODS generates.
// To refresh: ninja -C build mlir-doc && cp build/docs/Dialects/*.md docs/dialects/ &&
//   cp build/docs/JointPasses.md build/docs/JointConversionPasses.md build/docs/JointBufferPasses.md build/docs/JointLowerToCPUPasses.md build/docs/JointLowerToCUDAPasses.md docs/
// RUN: diff %joint_obj_root/docs/Dialects/JointOps.md %joint_src_root/docs/dialects/JointOps.md
// RUN: diff %joint_obj_root/docs/Dialects/AOOps.md %joint_src_root/docs/dialects/AOOps.md
// RUN: diff %joint_obj_root/docs/JointPasses.md %joint_src_root/docs/JointPasses.md
// RUN: diff %joint_obj_root/docs/JointConversionPasses.md %joint_src_root/docs/JointConversionPasses.md
// RUN: diff %joint_obj_root/docs/JointBufferPasses.md %joint_src_root/docs/JointBufferPasses.md
// RUN: diff %joint_obj_root/docs/JointLowerToCPUPasses.md %joint_src_root/docs/JointLowerToCPUPasses.md
// RUN: diff %joint_obj_root/docs/JointLowerToCUDAPasses.md %joint_src_root/docs/JointLowerToCUDAPasses.md
