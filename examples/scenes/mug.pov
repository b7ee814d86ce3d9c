#version 3.7;
#include "colors.inc"
#include "textures.inc"
global_settings { assumed_gamma 1.0 radiosity { pretrace_start 0.08 pretrace_end 0.01 count 120 recursion_limit 2 nearest_count 8 error_bound 0.8 } }
camera { location <0, 5.2, -13> look_at <0, 2.0, 0> angle 30 right x*image_width/image_height }
light_source { <-8, 14, -10> color rgb 1.1 area_light <4,0,0>, <0,0,4>, 6, 6 adaptive 1 jitter }
light_source { <10, 8, -6> color rgb 0.35 shadowless }
// a seamless studio sweep
plane { y, 0 pigment { rgb <0.93,0.92,0.9> } finish { diffuse 0.85 ambient 0 } }
plane { z, 6 pigment { rgb <0.93,0.92,0.9> } finish { diffuse 0.85 ambient 0 } }
#declare Glaze = texture { pigment { rgb <0.62,0.12,0.1> } finish { ambient 0 diffuse 0.7 specular 0.6 roughness 0.01 reflection { 0.04 0.12 fresnel on } } }
#declare Inside = texture { pigment { rgb <0.95,0.94,0.9> } finish { ambient 0 diffuse 0.8 specular 0.4 } }
union {
  difference {
    lathe { cubic_spline 8, <0,0>, <1.45,0>, <1.6,0.15>, <1.62,1.5>, <1.6,3.4>, <1.55,3.6>, <0,3.6>, <0,3.6> }
    cylinder { <0,0.25,0>, <0,4,0>, 1.45 texture { Inside } }
    texture { Glaze }
  }
  torus { 0.85, 0.2 rotate x*90 scale <0.8,1.1,1> translate <1.75,1.9,0> texture { Glaze } }
  rotate y*-30
}
