/*!
  \file EpidermisGeneNetwork.hpp
  \brief The intracellular gene network of the 3D epidermis model (Christley et al. 2010,
         "Intracellular gene network" and Table 2) as an ODE model for OdeSolver.

  Six species per cell, in this order: Notch N, Delta D, bound Notch/Delta B, Ovol2 O2, Ovol1 O1, c-Myc M.
  Regulation is by Hill functions H(X; a, b, c, h) = a + b / (1 + (c X)^h) (h < 0 activates, h > 0
  represses):

    dN/dt  = -ka N <D> + kd B - dN N + H(B; aBN, bBN, cBN, hBN) H(O2; 0, bON, cON, hON)
    dD/dt  = -ka D <N> + kd <B> - dD D + H(N; aND, bND, cND, hND)
    dB/dt  =  ka N <D> - kd B - dB B
    dO2/dt = -dO O2 + H(O1; aVO, bVO, cVO, hVO) H(G; 0, bGO, cGO, hGO)
    dO1/dt = -dV O1 + H(O2; 0, bOV, cOV, hOV) H(A; 0, bAV, cAV, hAV)
    dM/dt  = -dM M + H(O2; aOM, bOM, cOM, hOM)

  The inputs that couple a cell to its neighbours and environment - the neighbour averages <N>, <D>,
  <B>, the basement-membrane adhesion A and TGF-beta G - are the model's per-system parameters (held
  constant over one call, as the epidermis model updates them between mechanics steps); Table 2's
  constants are the same for every cell. The Jacobian is analytic and dense (6 x 6).
*/
#ifndef MORULA_ODE_EPIDERMISGENENETWORK_HPP
#define MORULA_ODE_EPIDERMISGENENETWORK_HPP

#include <morula/ode/detail/VectorOps.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

namespace morula::ode
{

//! One Hill regulation term a + b / (1 + (c X)^h) with an integer exponent h != 0.
struct HillTerm
{
    double a = 0.0, b = 1.0, c = 1.0;
    int h = 1;

    //! Value and derivative with respect to X; stable at X = 0 for both signs of h.
    KOKKOS_INLINE_FUNCTION void evaluate( double x, double& value, double& derivative ) const
    {
        const int m = h > 0 ? h : -h;
        const double cx = c * x;
        double q = 1.0, dq = 0.0; // q = (c x)^m, dq = d q / d x
        for ( int i = 0; i < m; ++i )
        {
            dq = dq * cx + q * c;
            q *= cx;
        }
        const double den = 1.0 + q;
        if ( h > 0 ) // b / (1 + q): repression
        {
            value = a + b / den;
            derivative = -b * dq / ( den * den );
        }
        else // b / (1 + q^-1) = b q / (1 + q): activation
        {
            value = a + b * q / den;
            derivative = b * dq / ( den * den );
        }
    }
};

//! Table 2 of Christley et al. (2010) (the defaults); every value can be overridden before building the model.
struct EpidermisGeneParameters
{
    double ka = 0.0003, kd = 0.12, dB = 0.19, dN = 0.03, dD = 0.006, dO = 1.0, dV = 1.0, dM = 1.0;
    HillTerm BN{ 0.01, 1.0, 1.0, -2 }; // B activates N
    HillTerm ON{ 0.0, 1.0, 0.5, 2 };   // O2 represses N
    HillTerm ND{ 0.01, 1.0, 10.0, 2 }; // N represses D (lateral inhibition)
    HillTerm VO{ 0.1, 2.0, 1.0, 2 };   // O1 represses O2
    HillTerm GO{ 0.0, 1.0, 1.0, 1 };   // G represses O2
    HillTerm OV{ 0.0, 2.0, 1.0, 2 };   // O2 represses O1
    HillTerm AV{ 0.0, 1.0, 1.0, 1 };   // A represses O1
    HillTerm OM{ 0.1, 1.0, 1.0, 1 };   // O2 represses M
};

enum EpidermisSpecies : int
{
    gene_N = 0,
    gene_D,
    gene_B,
    gene_O2,
    gene_O1,
    gene_M,
    gene_species_count
};

//! Per-system inputs (the model's "parameters"), in this order.
enum EpidermisInput : int
{
    input_mean_N = 0,
    input_mean_D,
    input_mean_B,
    input_adhesion,
    input_tgf_beta,
    input_count
};

template <class MemorySpace>
struct EpidermisGeneNetwork
{
    using memory_space = MemorySpace;
    int species = gene_species_count;
    int reactions = input_count; // the per-system parameter vector (the inputs) and the scratch length
    int jacobian_nonzeros_count = gene_species_count * gene_species_count;
    EpidermisGeneParameters p;
    Kokkos::View<int*, MemorySpace> jacobian_row_offsets, jacobian_columns, jacobian_diagonal;
    Kokkos::View<double*, MemorySpace> rate_constants; // default inputs
    Kokkos::View<double*, MemorySpace> initial_state;

    //! The paper's constant TGF-beta G = 0.4; default inputs are those of an isolated, non-adhering cell.
    explicit EpidermisGeneNetwork( const EpidermisGeneParameters& parameters = {},
                                   const std::vector<double>& default_inputs = { 0.0, 0.0, 0.0, 0.0, 0.4 },
                                   const std::vector<double>& x0 = std::vector<double>( gene_species_count, 0.0 ) )
        : p( parameters )
    {
        const int n = gene_species_count;
        std::vector<int> offsets( n + 1 ), columns( n * n ), diagonal( n );
        for ( int i = 0; i <= n; ++i )
            offsets[i] = i * n;
        for ( int z = 0; z < n * n; ++z )
            columns[z] = z % n;
        for ( int i = 0; i < n; ++i )
            diagonal[i] = i * n + i;
        jacobian_row_offsets = copy<int>( "morula::ode::gene::row_offsets", offsets );
        jacobian_columns = copy<int>( "morula::ode::gene::columns", columns );
        jacobian_diagonal = copy<int>( "morula::ode::gene::diagonal", diagonal );
        rate_constants = copy<double>( "morula::ode::gene::inputs", default_inputs );
        initial_state = copy<double>( "morula::ode::gene::x0", x0 );
    }

    //! f and, when J is not null, the dense Jacobian row-major. Serial in the calling thread (6 species).
    KOKKOS_INLINE_FUNCTION void evaluate( const detail::Strided<const double>& in, const detail::Strided<const double>& x,
                                          double f[gene_species_count], double J[gene_species_count][gene_species_count] ) const
    {
        const double N = x[gene_N], D = x[gene_D], B = x[gene_B], O2 = x[gene_O2], O1 = x[gene_O1], M = x[gene_M];
        const double mN = in[input_mean_N], mD = in[input_mean_D], mB = in[input_mean_B], A = in[input_adhesion],
                     G = in[input_tgf_beta];
        double hBN, dBN, hON, dON, hND, dND, hVO, dVO, hGO, dGO, hOV, dOV, hAV, dAV, hOM, dOM;
        p.BN.evaluate( B, hBN, dBN );
        p.ON.evaluate( O2, hON, dON );
        p.ND.evaluate( N, hND, dND );
        p.VO.evaluate( O1, hVO, dVO );
        p.GO.evaluate( G, hGO, dGO );
        p.OV.evaluate( O2, hOV, dOV );
        p.AV.evaluate( A, hAV, dAV );
        p.OM.evaluate( O2, hOM, dOM );
        f[gene_N] = -p.ka * N * mD + p.kd * B - p.dN * N + hBN * hON;
        f[gene_D] = -p.ka * D * mN + p.kd * mB - p.dD * D + hND;
        f[gene_B] = p.ka * N * mD - p.kd * B - p.dB * B;
        f[gene_O2] = -p.dO * O2 + hVO * hGO;
        f[gene_O1] = -p.dV * O1 + hOV * hAV;
        f[gene_M] = -p.dM * M + hOM;
        (void)M;
        if ( J == nullptr )
            return;
        for ( int i = 0; i < gene_species_count; ++i )
            for ( int q = 0; q < gene_species_count; ++q )
                J[i][q] = 0.0;
        J[gene_N][gene_N] = -p.ka * mD - p.dN;
        J[gene_N][gene_B] = p.kd + dBN * hON;
        J[gene_N][gene_O2] = hBN * dON;
        J[gene_D][gene_D] = -p.ka * mN - p.dD;
        J[gene_D][gene_N] = dND;
        J[gene_B][gene_N] = p.ka * mD;
        J[gene_B][gene_B] = -p.kd - p.dB;
        J[gene_O2][gene_O2] = -p.dO;
        J[gene_O2][gene_O1] = dVO * hGO;
        J[gene_O1][gene_O1] = -p.dV;
        J[gene_O1][gene_O2] = dOV * hAV;
        J[gene_M][gene_M] = -p.dM;
        J[gene_M][gene_O2] = dOM;
    }

    template <class Ops>
    KOKKOS_INLINE_FUNCTION void rhs( const Ops& ops, const detail::Strided<const double>& in,
                                     const detail::Strided<const double>& x, const detail::Strided<double>&,
                                     const detail::Strided<double>& f ) const
    {
        ops.single( [&]() {
            double v[gene_species_count];
            evaluate( in, x, v, nullptr );
            for ( int i = 0; i < gene_species_count; ++i )
                f[i] = v[i];
        } );
    }

    template <class Ops>
    KOKKOS_INLINE_FUNCTION void dense_jacobian( const Ops& ops, const detail::Strided<const double>& in,
                                                const detail::Strided<const double>& x, const detail::Strided<double>& J ) const
    {
        ops.single( [&]() {
            double v[gene_species_count], jac[gene_species_count][gene_species_count];
            evaluate( in, x, v, jac );
            for ( int i = 0; i < gene_species_count; ++i )
                for ( int q = 0; q < gene_species_count; ++q )
                    J[i * gene_species_count + q] = jac[i][q];
        } );
    }

    //! The CSR pattern is the full 6 x 6 matrix, so the values are the dense Jacobian row by row.
    template <class Ops>
    KOKKOS_INLINE_FUNCTION void jacobian_values( const Ops& ops, const detail::Strided<const double>& in,
                                                 const detail::Strided<const double>& x, const detail::Strided<double>& values ) const
    {
        dense_jacobian( ops, in, x, values );
    }

  private:
    template <class T>
    static Kokkos::View<T*, MemorySpace> copy( const std::string& label, const std::vector<T>& v )
    {
        Kokkos::View<T*, MemorySpace> d( label, v.size() );
        Kokkos::deep_copy( d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>( v.data(), v.size() ) );
        return d;
    }
};

} // namespace morula::ode

#endif
